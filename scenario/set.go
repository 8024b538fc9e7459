package scenario

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// step is one element of a --set path: a mapping key, or an index into a list.
type step struct {
	key   string
	index int // used when key is empty
}

// parseSetPath splits a path such as spec.clients[1].connections.maxPerHost into steps.
func parseSetPath(path string) ([]step, error) {
	var steps []step
	rest := path
	for rest != "" {
		if strings.HasPrefix(rest, "[") {
			end := strings.IndexByte(rest, ']')
			if len(steps) == 0 || end < 0 {
				return nil, fmt.Errorf("bad path %q: want KEY.KEY[INDEX]..., e.g. spec.services[0].replicas", path)
			}
			i, err := strconv.Atoi(rest[1:end])
			if err != nil || i < 0 {
				return nil, fmt.Errorf("bad path %q: index %q is not a non-negative integer", path, rest[1:end])
			}
			steps = append(steps, step{index: i})
			rest = rest[end+1:]
		} else {
			if len(steps) > 0 {
				if !strings.HasPrefix(rest, ".") {
					return nil, fmt.Errorf("bad path %q: want KEY.KEY[INDEX]..., e.g. spec.services[0].replicas", path)
				}
				rest = rest[1:]
			}
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			key := rest[:end]
			if key == "" || strings.ContainsAny(key, "]= \t") {
				return nil, fmt.Errorf("bad path %q: want KEY.KEY[INDEX]..., e.g. spec.services[0].replicas", path)
			}
			steps = append(steps, step{key: key})
			rest = rest[end:]
		}
	}
	if len(steps) == 0 {
		return nil, errors.New("empty path: want PATH=VALUE, e.g. spec.services[0].replicas=8")
	}
	return steps, nil
}

// applySet writes one --set PATH=VALUE into the document root before it is decoded, so
// that the value is checked exactly like one written in the file. Keys and list items
// missing on the way are created; every node it creates is recorded in marks, so that
// diagnostics about them name the argument instead of a line.
func applySet(root *yaml.Node, arg string, marks map[*yaml.Node]string) error {
	path, value, ok := strings.Cut(arg, "=")
	if !ok {
		return errors.New("want PATH=VALUE, e.g. spec.services[0].replicas=8")
	}
	steps, err := parseSetPath(path)
	if err != nil {
		return err
	}
	leaf, err := setValue(value)
	if err != nil {
		return err
	}
	markAll(leaf, arg, marks)
	// child returns the node that step i leads to when it does not exist yet.
	child := func(i int) *yaml.Node {
		if i == len(steps)-1 {
			return leaf
		}
		n := &yaml.Node{Kind: yaml.MappingNode}
		if steps[i+1].key == "" {
			n.Kind = yaml.SequenceNode
		}
		marks[n] = arg
		return n
	}
	cur, where := root, ""
	for i, s := range steps {
		last := i == len(steps)-1
		if s.key != "" {
			if isNull(cur) {
				*cur = yaml.Node{Kind: yaml.MappingNode, Line: cur.Line, Column: cur.Column}
			}
			if cur.Kind != yaml.MappingNode {
				return fmt.Errorf("cannot set key %q: %s is %s, not a mapping", s.key, describeWhere(where), describe(cur))
			}
			j := mappingIndex(cur, s.key)
			switch {
			case j < 0:
				key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s.key}
				marks[key] = arg
				next := child(i)
				cur.Content = append(cur.Content, key, next)
				cur = next
			case last:
				cur.Content[j+1] = leaf
			default:
				cur = cur.Content[j+1]
			}
			where = joinPath(where, s.key)
			continue
		}
		if isNull(cur) {
			*cur = yaml.Node{Kind: yaml.SequenceNode, Line: cur.Line, Column: cur.Column}
		}
		if cur.Kind != yaml.SequenceNode {
			return fmt.Errorf("cannot index %s: it is %s, not a list", describeWhere(where), describe(cur))
		}
		switch n := len(cur.Content); {
		case s.index > n:
			return fmt.Errorf("index %d out of range: %s has length %d; index %d appends", s.index, where, n, n)
		case s.index == n:
			next := child(i)
			cur.Content = append(cur.Content, next)
			cur = next
		case last:
			cur.Content[s.index] = leaf
		default:
			cur = cur.Content[s.index]
		}
		where = fmt.Sprintf("%s[%d]", where, s.index)
	}
	return nil
}

// setValue is the node a --set value stands for. A plain scalar with no tag lets the
// decoder read it as if written in the file; an empty value is YAML's null and so
// unsets the field. A value in braces or brackets is a YAML flow mapping or list,
// {distribution: constant, value: 1ms}, read as YAML reads it.
func setValue(value string) (*yaml.Node, error) {
	if !strings.HasPrefix(value, "{") && !strings.HasPrefix(value, "[") {
		return &yaml.Node{Kind: yaml.ScalarNode, Value: value}, nil
	}
	bad := func(why string) error {
		return fmt.Errorf("value %s is not a YAML flow mapping or list: %s", value, why)
	}
	// yaml.v3 reads the first node and ignores what follows it on the line.
	closing := map[byte]byte{'{': '}', '[': ']'}[value[0]]
	if t := strings.TrimSpace(value); t[len(t)-1] != closing {
		return nil, bad(fmt.Sprintf("it must end with %c", closing))
	}
	dec := yaml.NewDecoder(strings.NewReader(value))
	var doc, next yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, bad(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if err := dec.Decode(&next); err != io.EOF {
		return nil, bad("it holds more than one YAML document")
	}
	return doc.Content[0], nil
}

// markAll records that n and everything in it was written by the --set argument arg.
func markAll(n *yaml.Node, arg string, marks map[*yaml.Node]string) {
	marks[n] = arg
	for _, c := range n.Content {
		markAll(c, arg, marks)
	}
}

func describeWhere(path string) string {
	if path == "" {
		return "the document"
	}
	return path
}

// mappingIndex is the index in m.Content of the first key named key, or -1.
func mappingIndex(m *yaml.Node, key string) int {
	for j := 0; j+1 < len(m.Content); j += 2 {
		if m.Content[j].Kind == yaml.ScalarNode && m.Content[j].Value == key {
			return j
		}
	}
	return -1
}
