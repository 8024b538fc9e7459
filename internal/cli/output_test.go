package cli

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// -o's help and the formats it chooses from are one list: every format has a line of
// help, and every format a command's help names is one it writes, in the table's order.
func TestOutputHelpListsExactlyTheFormats(t *testing.T) {
	var names []string
	for _, f := range formats {
		if f.name == "" || f.help == "" || f.write == nil {
			t.Errorf("format %q: want a name, a line of help and a writer", f.name)
		}
		names = append(names, f.name)
	}
	for _, c := range []*cobra.Command{
		newSimulate(io.Discard, io.Discard),
		newEmulate(io.Discard, io.Discard),
		newReport(io.Discard),
	} {
		verb := c.Name()
		lines := strings.Split(c.Flags().Lookup("output").Usage, "\n")
		if lines[0] != "report format:" {
			t.Errorf("%s -o: help begins %q, want %q", verb, lines[0], "report format:")
		}
		var listed []string
		for _, l := range lines[1:] {
			name, help, _ := strings.Cut(strings.TrimSpace(l), " ")
			listed = append(listed, name)
			if strings.TrimSpace(help) == "" {
				t.Errorf("%s -o: %q has no description", verb, name)
			}
			if _, err := renderer(name); err != nil {
				t.Errorf("%s -o: help names %q, which it does not write: %v", verb, name, err)
			}
		}
		if !slices.Equal(listed, names) {
			t.Errorf("%s -o: help lists %v, want the formats %v", verb, listed, names)
		}
	}
	if _, err := renderer("xml"); err == nil {
		t.Error("-o xml: accepted, want refused")
	}
}
