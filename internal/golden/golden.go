// Package golden compares what a test made with a file kept in its testdata,
// and rewrites the file when the test runs with -update.
package golden

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files from this run")

// Check compares got with the file at path and names the first line that
// differs; with -update it writes got to the file instead.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(gl), len(wl)) {
		if g, w := line(gl, i), line(wl, i); g != w {
			t.Errorf("%s differs at line %d (go test -update rewrites it):\n got: %s\nwant: %s", path, i+1, g, w)
			return
		}
	}
}

func line(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "<end>"
}
