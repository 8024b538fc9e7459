package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The examples' document says what the tool prints today: every region regenerated
// from fresh runs matches the file, and every sentence the generators check holds.
// This runs every example the document quotes (about 35 s of CPU, spread over the
// cores).
func TestREADMEMatchesRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every example the document quotes")
	}
	path := filepath.Join("..", "..", "examples", "README.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := fill(string(data), figures, newLab())
	if err != nil {
		t.Fatal(err)
	}
	if doc != string(data) {
		t.Errorf("examples/README.md disagrees with the runs; `make examples-doc` rewrites it:\n%s", differences(string(data), doc))
	}
}

// fakes are generators that need no run.
var fakes = map[string]generator{
	"a": func(*lab) (string, error) { return "1,234 rps", nil },
	"b": func(*lab) (string, error) { return "\n| x | y |\n|---|---|\n| 1 | 2 |\n", nil },
}

func TestFillRewritesOnlyRegions(t *testing.T) {
	doc := "Runs reach <!-- generated: a -->999 rps<!-- end --> today.\n\n<!-- generated: b -->\n| old |\n<!-- end -->\nafter\n"
	want := "Runs reach <!-- generated: a -->1,234 rps<!-- end --> today.\n\n<!-- generated: b -->\n| x | y |\n|---|---|\n| 1 | 2 |\n<!-- end -->\nafter\n"
	got, err := fill(doc, fakes, newLab())
	if err != nil || got != want {
		t.Fatalf("fill: %v\n%s\nwant\n%s", err, got, want)
	}
	if again, _ := fill(got, fakes, newLab()); again != got {
		t.Errorf("a second fill changed the document:\n%s", again)
	}
	if d := differences(doc, got); !strings.Contains(d, "region a:") || !strings.Contains(d, "999 rps") || !strings.Contains(d, "1,234 rps") {
		t.Errorf("differences do not show region a's old and new text:\n%s", d)
	}
}

func TestFillRejects(t *testing.T) {
	both := "<!-- generated: a --><!-- end --> <!-- generated: b --><!-- end -->"
	cases := []struct{ name, doc, want string }{
		{"unknown region", both + " <!-- generated: c --><!-- end -->", "region c: no such figure"},
		{"generator without a region", "<!-- generated: a --><!-- end -->", "no region for b"},
		{"no end", "<!-- generated: a -->text", "region a has no <!-- end -->"},
		{"stray end", both + " <!-- end -->", "line 1: <!-- end --> without a region"},
		{"nested", "<!-- generated: a --> <!-- generated: b --><!-- end -->", "opens inside region a"},
		{"twice", both + " <!-- generated: a --><!-- end -->", "region a appears twice"},
		{"unterminated marker", "<!-- generated: a", "unterminated"},
		{"bad name", "<!-- generated: a b --><!-- end -->", "bad region name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := fill(c.doc, fakes, newLab()); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
		})
	}
	failing := map[string]generator{"a": fakes["a"], "b": func(*lab) (string, error) {
		return "", claim("4 and 5 pods are slower than 3", "they are not")
	}}
	if _, err := fill(both, failing, newLab()); err == nil || !strings.Contains(err.Error(), `region b: the document says "4 and 5 pods`) {
		t.Errorf("a failed check: %v", err)
	}
}

// Without -w a stale document exits 1 and is left alone; -w rewrites it, after which
// the check passes.
func TestCheckAndWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	stale := "<!-- generated: a -->1 rps<!-- end --><!-- generated: b --><!-- end -->\n"
	if err := os.WriteFile(path, []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := check(path, false, fakes, &out, &errOut); code != 1 || !strings.Contains(out.String(), "region a:") {
		t.Fatalf("check of a stale file: exit %d, %s%s", code, out.String(), errOut.String())
	}
	if data, _ := os.ReadFile(path); string(data) != stale {
		t.Fatal("the check wrote the file")
	}
	if code := check(path, true, fakes, &out, &errOut); code != 0 {
		t.Fatalf("-w: exit %d: %s", code, errOut.String())
	}
	if code := check(path, false, fakes, &out, &errOut); code != 0 {
		t.Errorf("check after -w: exit %d", code)
	}
	if code := check(filepath.Join(t.TempDir(), "none.md"), false, fakes, &out, &errOut); code != 2 {
		t.Errorf("a missing file: exit %d, want 2", code)
	}
}

func TestFormats(t *testing.T) {
	cases := []struct{ got, want string }{
		{count(0), "0"}, {count(999), "999"}, {count(1000), "1,000"}, {count(-1234567), "-1,234,567"},
		{whole(16146.85), "16,147"}, {pct(0.0018, 2), "0.18 %"}, {pct(1, 0), "100 %"},
		{millis(200.933), "200.9"}, {span(60), "60 s"}, {span(300), "300 s"}, {span(600), "10 min"}, {span(3600), "1 h"},
		{plural(1, "connection"), "1 connection"}, {plural(4420, "connection"), "4,420 connections"},
		{and([]string{"a"}), "a"}, {and([]string{"a", "b", "c"}), "a, b and c"},
		{sets([]string{"x=1", "y=2"}), "`--set x=1 --set y=2`"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
