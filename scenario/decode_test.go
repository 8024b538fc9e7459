package scenario

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// every holds one field of each kind the decoder supports, beyond those in Scenario.
type every struct {
	On    bool             `yaml:"on"`
	Small int8             `yaml:"small"`
	Ratio float64          `yaml:"ratio"`
	Name  string           `yaml:"name"`
	Wait  *metav1.Duration `yaml:"wait"`
	Items []every          `yaml:"items"`
	Rate  Rate             `yaml:"rate"`
	Next  *every           `yaml:"next"`
	// Untagged has no tag: no key fills it (yaml.v3 would take "untagged").
	Untagged int
}

func decodeString(t *testing.T, in string) (every, Positions, Diagnostics) {
	t.Helper()
	root, diag := parse("f.yaml", []byte(in))
	if diag != nil {
		t.Fatal(diag)
	}
	var e every
	pos, diags := decode("f.yaml", root, nil, &e)
	return e, pos, diags
}

func TestDecodeKinds(t *testing.T) {
	in := `
on: true
small: -128
ratio: 2
name: 42
wait: 1m
items:
- {name: a, items: [{on: false}]}
- &b {name: b}
- *b
- ~
rate: 10/m
next: *b
`
	e, pos, diags := decodeString(t, in)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	want := every{On: true, Small: -128, Ratio: 2, Name: "42", Wait: &metav1.Duration{Duration: time.Minute},
		Items: []every{{Name: "a", Items: []every{{}}}, {Name: "b"}, {Name: "b"}, {}}, Rate: Rate{PerSecond: 1.0 / 6}, Next: &every{Name: "b"}}
	if !reflect.DeepEqual(e, want) {
		t.Errorf("decoded %+v\nwant %+v", e, want)
	}
	// An alias is where it is used, not where its anchor is.
	for path, want := range map[string][2]int{"items[2]": {10, 3}, "next": {13, 7}} {
		if line, col, _ := pos.Lookup(path); line != want[0] || col != want[1] {
			t.Errorf("%s at %d:%d, want %d:%d", path, line, col, want[0], want[1])
		}
	}
	if _, _, ok := pos.Lookup("items[0].items[0].on"); !ok {
		t.Error("no position for items[0].items[0].on")
	}
}

func TestDecodeNull(t *testing.T) {
	e, pos, diags := decodeString(t, "wait:\nname: null\n")
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	if e.Wait != nil || e.Name != "" {
		t.Errorf("null decoded as %+v, want the zero value", e)
	}
	if _, _, ok := pos.Lookup("wait"); !ok {
		t.Error("a null value has no position")
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{"on: yes", `1:5: on: expected true or false, got "yes"`},
		{"on: [true]", `1:5: on: expected true or false, got a list`},
		{"small: 128", `1:8: small: integer 128 is out of range`},
		{"small: 99999999999999999999", `1:8: small: integer 99999999999999999999 is out of range`},
		{"small: 1.5", `1:8: small: expected an integer, got "1.5"`},
		{"ratio: .inf", `1:8: ratio: expected a finite number, got .inf`},
		{"ratio: half", `1:8: ratio: expected a number, got "half"`},
		{"name: {first: a}", `1:7: name: expected a string, got a mapping`},
		{"wait: [1s]", `1:7: wait: expected a duration such as 10ms, got a list`},
		{"rate: {n: 1}", `1:7: rate: expected a rate such as 1000/s, got a mapping`},
		{"items: {name: a}", `1:8: items: expected a list, got a mapping`},
		{"items: [a]", `1:9: items[0]: expected a mapping, got "a"`},
		{"[1, 2]", `1:1: expected a mapping, got a list`},
		{"untagged: 1", `1:1: unknown field "untagged" at the top level; known fields: on, small, ratio, name, wait, items, rate, next`},
		{"[a]: 1", `1:1: keys must be field names, got a list at the top level`},
		{"name: a\nitems:\n- {name: b, name: c}", `3:13: duplicate field "name" in items[0] (first at line 3)`},
	}
	for _, tc := range cases {
		_, _, diags := decodeString(t, tc.in)
		if got := diags.Error(); !strings.Contains(got, tc.want) {
			t.Errorf("decoding %q:\n%s\nwant:\n%s", tc.in, got, tc.want)
		}
	}
}

func TestDecodeQuantityWrongShape(t *testing.T) {
	in := strings.Replace(base, "    pod:", "    pod:\n      cpu: [1]", 1)
	_, _, diags := Load("f.yaml", []byte(in), nil)
	if want := `f.yaml:10:12: spec.services[0].pod.cpu: expected a quantity such as 500m, got a list`; diags.Error() != want {
		t.Errorf("got %v, want %s", diags, want)
	}
}

// TestDecodeSetNodes checks that a node marked as written by --set is reported as such.
func TestDecodeSetNodes(t *testing.T) {
	n := &yaml.Node{Kind: yaml.ScalarNode, Value: "x"}
	var e every
	_, diags := decode("f.yaml", n, map[*yaml.Node]string{n: "a=x"}, &e)
	if want := `f.yaml: --set a=x: expected a mapping, got "x"`; diags.Error() != want {
		t.Errorf("got %v, want %s", diags, want)
	}
}
