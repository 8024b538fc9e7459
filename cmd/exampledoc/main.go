// Command exampledoc writes the figures of examples/README.md from runs of the
// examples. Every number the tool produces sits in that file between
// <!-- generated: NAME --> and <!-- end -->; this command runs the simulations that
// NAME stands for (fixed seeds, so the same runs every time) and fills the region
// from their Results. Sentences that draw a conclusion from the figures are checked
// too: a run that no longer bears one out is an error naming the sentence.
//
//	go run ./cmd/exampledoc -w    # rewrite the regions (make examples-doc)
//	go run ./cmd/exampledoc       # exit 1, listing the regions that differ
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	write := flag.Bool("w", false, "rewrite the document's generated regions in place")
	path := flag.String("doc", "examples/README.md", "the document to check or rewrite")
	flag.Parse()
	os.Exit(check(*path, *write, figures, os.Stdout, os.Stderr))
}

// check compares the document at path with what gens make of it, or rewrites it;
// it returns the exit code: 0 the same (or rewritten), 1 different, 2 an error.
func check(path string, write bool, gens map[string]generator, stdout, stderr io.Writer) int {
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	old := string(data)
	doc, err := fill(old, gens, newLab())
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", path, err)
		return 2
	}
	if doc == old {
		return 0
	}
	if write {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		fmt.Fprintf(stdout, "rewrote %s\n", path)
		return 0
	}
	fmt.Fprintf(stdout, "%s disagrees with the runs (go run ./cmd/exampledoc -w rewrites it):\n%s", path, differences(old, doc))
	return 1
}

// differences lists each region whose text changed, as the document has it and as
// the runs give it.
func differences(old, doc string) string {
	before, _ := parseRegions(old)
	after, _ := parseRegions(doc)
	b := &strings.Builder{}
	for i, r := range after {
		if was, now := old[before[i].start:before[i].end], doc[r.start:r.end]; was != now {
			fmt.Fprintf(b, "region %s:\n  document: %s\n  runs:     %s\n", r.name, indent(was), indent(now))
		}
	}
	return b.String()
}

func indent(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n            ") }
