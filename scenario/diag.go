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
}

// Error formats the diagnostic the way compilers do, so editors can jump to it:
// FILE:LINE:COL: message, or FILE: --set PATH=VALUE: message.
func (d Diagnostic) Error() string {
	msg := d.Msg
	if d.Severity == Warning {
		msg = d.Severity.String() + ": " + msg
	}
	switch {
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
