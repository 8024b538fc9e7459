package scenario

import (
	"errors"
	"fmt"
	"testing"
)

func TestDiagnosticFormat(t *testing.T) {
	cases := []struct {
		d    Diagnostic
		want string
	}{
		{Diagnostic{File: "s.yaml", Line: 3, Col: 7, Msg: "bad"}, "s.yaml:3:7: bad"},
		{Diagnostic{File: "s.yaml", Line: 3, Col: 7, Severity: Warning, Msg: "odd"}, "s.yaml:3:7: warning: odd"},
		{Diagnostic{File: "s.yaml", Set: "spec.seed=x", Msg: "bad"}, "s.yaml: --set spec.seed=x: bad"},
		{Diagnostic{File: "s.yaml", Set: "spec.seed=1", Severity: Warning, Msg: "odd"}, "s.yaml: --set spec.seed=1: warning: odd"},
		{Diagnostic{File: "s.yaml", Msg: "no such file or directory"}, "s.yaml: no such file or directory"},
		{Diagnostic{File: "s.yaml", Set: "spec.duration=-1s", Flag: "--duration -1s", Msg: "bad"}, "s.yaml: --duration -1s: bad"},
	}
	for _, tc := range cases {
		if got := tc.d.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestDiagnostics(t *testing.T) {
	ds := Diagnostics{
		{File: "f", Line: 9, Col: 1, Severity: Warning, Msg: "c"},
		{File: "f", Line: 2, Col: 5, Msg: "b"},
		{File: "f", Line: 2, Col: 1, Severity: Warning, Msg: "a"},
		{File: "f", Set: "x=1", Msg: "s"},
	}
	ds.sort()
	if got, want := ds.Error(), "f: --set x=1: s\nf:2:1: warning: a\nf:2:5: b\nf:9:1: warning: c"; got != want {
		t.Errorf("sorted:\n%s\nwant:\n%s", got, want)
	}
	if !ds.HasErrors() {
		t.Error("HasErrors = false with errors")
	}
	if (Diagnostics{ds[1], ds[3]}).HasErrors() {
		t.Error("HasErrors = true with warnings only")
	}
}

// TestNameFlags: a value a flag wrote is blamed on the flag as typed; --set values
// the user typed keep their name.
func TestNameFlags(t *testing.T) {
	_, _, diags := Load("f.yaml", []byte(base), []string{"spec.duration=-1s", "spec.seed=x", "spec.services[0].replicas=-1"})
	diags.NameFlags([]FlagSet{{Flag: "--duration -1s", Set: "spec.duration=-1s"}, {Flag: "--seed x", Set: "spec.seed=x"}})
	checkLines(t, diags, []string{
		"f.yaml: --duration -1s: spec.duration: negative duration -1s",
		`f.yaml: --seed x: spec.seed: expected an integer, got "x"`,
	})
	_, _, diags = Load("f.yaml", []byte(base), []string{"spec.services[0].replicas=-1"})
	diags.NameFlags([]FlagSet{{Flag: "--duration -1s", Set: "spec.duration=-1s"}})
	checkLines(t, diags, []string{"f.yaml: --set spec.services[0].replicas=-1: spec.services[0].replicas: must not be negative"})
}

// An engine's FieldError, however wrapped, points at its field's line, or its
// nearest written parent's; any other error is not located.
func TestLocate(t *testing.T) {
	pos := Positions{file: "s.yaml", at: map[string]position{"spec.clients[0]": {Line: 7, Col: 5}, "spec.clients[0].target": {Line: 8, Col: 13}}}
	for _, tc := range []struct {
		name string
		err  error
		want string // "" when not located
	}{
		{"at its field", &FieldError{Path: "spec.clients[0].target", Err: errors.New(`no service "db"`)}, `s.yaml:8:13: spec.clients[0].target: no service "db"`},
		{"wrapped, at its parent", fmt.Errorf("emulate: %w", &FieldError{Path: "spec.clients[0].replicas", Err: errors.New("pod x cannot be scheduled")}),
			"s.yaml:7:5: spec.clients[0].replicas: pod x cannot be scheduled"},
		{"not a field's", errors.New("out of memory"), ""},
		{"none", nil, ""},
	} {
		d, ok := pos.Locate(tc.err)
		if got := map[bool]string{true: d.Error()}[ok]; got != tc.want {
			t.Errorf("%s: located %q, want %q", tc.name, got, tc.want)
		}
	}
}
