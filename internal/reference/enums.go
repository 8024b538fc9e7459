package reference

import (
	"reflect"
	"regexp"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"trafficlab/scenario"
)

// probeValue is what every string key of a probe scenario holds: a value no fixed set
// contains, so that validation names the set.
const probeValue = "?"

// unknownValue is validation's message about a value outside a fixed set:
// `PATH: unknown WHAT "?"; valid: a, b` (or known:, supported:).
var unknownValue = regexp.MustCompile(`^(\S+): unknown [^"]*"\?"[^;]*; (?:valid|known|supported): ([^;]+)`)

// onlyValue is validation's message about a key that takes one value (apiVersion).
var onlyValue = regexp.MustCompile(`^(\S+): must be (\S+), got "\?"$`)

var (
	enumsOnce sync.Once
	enums     map[string][]string
)

// Enums are the fixed sets of values validation accepts for string keys, keyed by
// "import/path.Type.Field". They are read from validation itself, so they cannot drift:
// a probe scenario sets every key, every string to a value in no set, and each error
// "unknown ...; valid: ..." names a set. Keys checked only in some modes (ipvsScheduler
// with proxyMode ipvs) are found by probing again with each value found.
func Enums() map[string][]string {
	enumsOnce.Do(func() { enums = probeEnums() })
	return enums
}

func probeEnums() map[string][]string {
	out := map[string][]string{}
	fieldAt := map[string]string{} // probe path → type key and field
	found := map[string][]string{} // probe path → values
	probe := func(set map[string]string) []string {
		doc := fill(scenarioType, "", set, fieldAt, 0)
		data, err := yaml.Marshal(doc)
		if err != nil {
			panic(err) // maps of strings, numbers and lists always marshal
		}
		_, _, diags := scenario.Load("probe.yaml", data, nil)
		var fresh []string
		for _, d := range diags {
			m := unknownValue.FindStringSubmatch(d.Msg)
			if m == nil {
				m = onlyValue.FindStringSubmatch(d.Msg)
			}
			if m == nil {
				continue
			}
			if _, ok := found[m[1]]; ok {
				continue
			}
			var vals []string
			for _, v := range strings.Split(m[2], ",") {
				vals = append(vals, strings.TrimSpace(v))
			}
			found[m[1]] = vals
			fresh = append(fresh, m[1])
		}
		return fresh
	}
	type step struct{ set map[string]string }
	queue := []step{{map[string]string{}}}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, path := range probe(s.set) {
			for _, v := range found[path] {
				next := map[string]string{path: v}
				for k, x := range s.set {
					next[k] = x
				}
				queue = append(queue, step{next})
			}
		}
	}
	for path, vals := range found {
		if f, ok := fieldAt[path]; ok {
			out[f] = vals
		}
	}
	return out
}

// fill builds a probe value of type t at path: every key present, lists of one, strings
// probeValue unless set says otherwise, numbers 1, scalars a valid value. It records
// which type's field each string path is in fieldAt.
func fill(t reflect.Type, path string, set map[string]string, fieldAt map[string]string, depth int) any {
	switch t {
	case durationType:
		return "1s"
	case quantityType:
		return "1"
	case intOrStringType:
		return 1
	case rateType:
		return "1/s"
	case percentType:
		return "1%"
	case bandwidthType:
		return "1mbit"
	}
	if isString(t) {
		if v, ok := set[path]; ok {
			return v
		}
		return probeValue
	}
	switch t.Kind() {
	case reflect.Pointer:
		return fill(t.Elem(), path, set, fieldAt, depth)
	case reflect.Slice:
		return []any{fill(t.Elem(), path+"[0]", set, fieldAt, depth)}
	case reflect.Map:
		return map[string]any{"a": fill(t.Elem(), path+".a", set, fieldAt, depth)}
	case reflect.Bool:
		return true
	case reflect.Float32, reflect.Float64:
		return 0.5
	case reflect.Struct:
		m := map[string]any{}
		if depth > 8 { // Kubernetes' types nest; none of their sets is this deep
			return m
		}
		for i := range t.NumField() {
			f := t.Field(i)
			key, _ := keyOf(f)
			if key == "" || key == "-" {
				continue
			}
			p := joinPath(path, key)
			if isString(base(f.Type)) {
				fieldAt[p] = typeKey(t) + "." + f.Name
				if f.Type.Kind() == reflect.Slice {
					fieldAt[p+"[0]"] = typeKey(t) + "." + f.Name
				}
			}
			m[key] = fill(f.Type, p, set, fieldAt, depth+1)
		}
		return m
	}
	if isInt(t) {
		return 1
	}
	return nil
}
