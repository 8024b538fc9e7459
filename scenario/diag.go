package scenario

import (
	"fmt"
	"slices"
	"strings"
)

// Severity of a diagnostic: an Error stops the run, a Warning does not.
type Severity int

// Severities.
const (
	Error Severity = iota
	Warning
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Diagnostic is one problem in a scenario, located where the user can fix it: a line and
// column of the file, or the `--set` argument the value came from.
type Diagnostic struct {
	File      string
	Line, Col int // 1-based; 0 when the position is unknown or the value came from --set
	Severity  Severity
	Msg       string
	Set       string // the PATH=VALUE argument of --set that wrote the value, if any
	// Flag is the command-line flag, as typed, that Set stands for when the user
	// typed a flag rather than --set: "--duration -1s" for spec.duration=-1s.
	Flag string
}

// FlagSet is a --set argument that a command-line flag stands for: Flag as typed
// ("--duration -1s") and the PATH=VALUE it sets ("spec.duration=-1s").
type FlagSet struct{ Flag, Set string }

// NameFlags makes the diagnostics about values that flags wrote name the flags as
// typed, rather than a --set nobody typed.
func (ds Diagnostics) NameFlags(flags []FlagSet) {
	for i := range ds {
		for _, f := range flags {
			if ds[i].Set == f.Set {
				ds[i].Flag = f.Flag
			}
		}
	}
}

// Error formats the diagnostic the way compilers do, so editors can jump to it:
// FILE:LINE:COL: message, or FILE: --set PATH=VALUE: message.
func (d Diagnostic) Error() string {
	msg := d.Msg
	if d.Severity == Warning {
		msg = d.Severity.String() + ": " + msg
	}
	switch {
	case d.Flag != "":
		return fmt.Sprintf("%s: %s: %s", d.File, d.Flag, msg)
	case d.Set != "":
		return fmt.Sprintf("%s: --set %s: %s", d.File, d.Set, msg)
	case d.Line == 0:
		return fmt.Sprintf("%s: %s", d.File, msg)
	default:
		return fmt.Sprintf("%s:%d:%d: %s", d.File, d.Line, d.Col, msg)
	}
}

// Diagnostics is every problem found in a scenario. As an error it prints one per line;
// check HasErrors rather than comparing with nil, since warnings alone are no failure.
type Diagnostics []Diagnostic

func (ds Diagnostics) Error() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.Error()
	}
	return strings.Join(lines, "\n")
}

// HasErrors reports whether any diagnostic is an Error.
func (ds Diagnostics) HasErrors() bool {
	return slices.ContainsFunc(ds, func(d Diagnostic) bool { return d.Severity == Error })
}

// sort orders diagnostics as they appear in the file; those from --set, which have no
// line, come first in the order of the arguments.
func (ds Diagnostics) sort() {
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Col - b.Col
	})
}

// FieldError is a scenario value an engine cannot use, found after loading (a
// distribution the models reject, a pod no node fits), at Path (e.g.
// spec.services[0].pod.serviceTime), so the CLI can point at its line and column
// with Positions.Diag.
type FieldError struct {
	Path string
	Err  error
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Err.Error() }
