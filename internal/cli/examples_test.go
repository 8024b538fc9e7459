package cli

import (
	"bytes"
	"strings"
	"testing"

	"trafficlab/examples"
)

// An example printed to be saved elsewhere does not point at ../docs, which holds
// only inside examples/: its first line says how to get the schema instead, and
// every other byte is the example's. What it prints validates where it is saved.
func TestPrintedExampleSaysHowToGetTheSchema(t *testing.T) {
	for _, ex := range examples.List() {
		t.Run(ex.Name, func(t *testing.T) {
			data, _ := examples.Get(ex.Name)
			code, out, errOut := runCLI("examples", ex.Name)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if strings.Contains(out, "../docs") {
				t.Errorf("the printed example points at ../docs:\n%s", out[:min(len(out), 300)])
			}
			if !strings.Contains(out, "trafficlab schema > scenario.schema.json") {
				t.Errorf("the printed example does not say how to get the schema")
			}
			_, rest, _ := bytes.Cut(data, []byte("\n"))
			if !strings.HasSuffix(out, string(rest)) {
				t.Errorf("the printed example differs from %s past its first line", ex.Name)
			}
			if code, _, errOut := runCLI("validate", writeTemp(t, ex.Name, out)); code != exitOK || errOut != "" {
				t.Errorf("the printed example does not validate: exit %d: %s", code, errOut)
			}
		})
	}
	// Data without the schema line is printed as it is.
	if got := forSaving([]byte("apiVersion: x\n")); string(got) != "apiVersion: x\n" {
		t.Errorf("forSaving changed data without a schema line: %q", got)
	}
}
