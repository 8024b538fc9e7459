package importer

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// The scenario is written as a yaml.v3 node tree, because only nodes carry the
// comments that mark what the manifests did not say.

// mapping is a YAML mapping built key by key, in the order written.
type mapping struct{ node *yaml.Node }

func newMapping() mapping { return mapping{&yaml.Node{Kind: yaml.MappingNode}} }

// flowMapping is a mapping written on one line: {distribution: exponential, mean: 5ms}.
func flowMapping() mapping {
	m := newMapping()
	m.node.Style = yaml.FlowStyle
	return m
}

// set adds key: value, with comment lines above the key.
func (m mapping) set(key string, value *yaml.Node, comment ...string) mapping {
	k := &yaml.Node{Kind: yaml.ScalarNode, Value: key, HeadComment: strings.Join(comment, "\n")}
	m.node.Content = append(m.node.Content, k, value)
	return m
}

// has tells whether key was set.
func (m mapping) has(key string) bool {
	for i := 0; i < len(m.node.Content); i += 2 {
		if m.node.Content[i].Value == key {
			return true
		}
	}
	return false
}

func str(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

func integer[T ~int | ~int32 | ~int64](i T) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(int64(i), 10)}
}

// sequence is a list of nodes.
func sequence(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Content: items}
}

// value is v, a Kubernetes type (which marshals through JSON), as a node.
func value(v any) (*yaml.Node, error) {
	out, err := sigsyaml.Marshal(v)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(out, &doc); err != nil {
		return nil, err
	}
	return doc.Content[0], nil
}

// compact writes small mappings and lists of scalars on one line, as the
// examples are written.
func compact(n *yaml.Node) *yaml.Node {
	for _, c := range n.Content {
		compact(c)
	}
	if (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && len(n.Content) <= 6 && allScalars(n) {
		n.Style = yaml.FlowStyle
	}
	return n
}

func allScalars(n *yaml.Node) bool {
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode && c.Style != yaml.FlowStyle {
			return false
		}
		if c.HeadComment != "" || c.LineComment != "" {
			return false
		}
	}
	return true
}
