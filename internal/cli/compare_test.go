package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// compare --html writes the page and still prints the table; a page that cannot
// be written fails the command.
func TestCompareHTMLFlag(t *testing.T) {
	dir := t.TempDir()
	var results []string
	for _, run := range []struct{ name, threads string }{{"base.json", "2"}, {"more.json", "4"}} {
		code, out, errOut := runCLI("simulate", writeTemp(t, "s.yaml", good), "-o", "json", "-q", "--set", "spec.clients[0].threads="+run.threads)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		p := filepath.Join(dir, run.name)
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		results = append(results, p)
	}
	page := filepath.Join(dir, "compare.html")
	cases := []struct {
		name     string
		html     string
		code     int
		stdout   string   // in stdout
		page     []string // in the page written
		noOutput bool
	}{
		{"page and table", page, exitOK, "base.json", []string{"<!DOCTYPE html>", "</span>base.json</th>", "</span>more.json</th>", `id="compare-data"`}, false},
		{"unwritable page", filepath.Join(dir, "missing", "compare.html"), exitFailure, "", nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runCLI("compare", results[0], results[1], "--html", c.html)
			if code != c.code || !strings.Contains(out, c.stdout) || c.noOutput && out != "" {
				t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", code, c.code, out, errOut)
			}
			if c.page == nil {
				return
			}
			data, err := os.ReadFile(c.html)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range c.page {
				if !strings.Contains(string(data), want) {
					t.Errorf("page lacks %q", want)
				}
			}
		})
	}
}
