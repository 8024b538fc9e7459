package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"trafficlab/examples"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func writeTemp(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const good = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: cli}
spec:
  duration: 2s
  services:
  - name: web
    replicas: 3
    pod:
      serviceTime: {distribution: exponential, mean: 1ms}
  clients:
  - name: caller
    target: web
    threads: 2
`

func TestDefaultRunNeedsNoFile(t *testing.T) {
	code, out, errOut := runCLI("simulate", "--duration", "2s")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Requests", "Latencies", "webapp1-0", "Idle pods", "Clients"} {
		if !strings.Contains(out, want) {
			t.Errorf("default report lacks %q:\n%s", want, out)
		}
	}
}

func TestJSONHasTheDocumentedKeys(t *testing.T) {
	code, out, errOut := runCLI("simulate", writeTemp(t, "s.yaml", good), "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	// The keys every Result has (docs/result.md).
	for _, k := range []string{"engine", "scenario", "seed", "duration_s", "requests", "errors", "throughput_rps", "latency_ms", "pods", "timeline"} {
		if _, ok := r[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	pod := r["pods"].([]any)[0].(map[string]any)
	for _, k := range []string{"name", "service", "node", "requests", "connections", "cpu_utilization", "start_s", "end_s"} {
		if _, ok := pod[k]; !ok {
			t.Errorf("pod lacks %q", k)
		}
	}
	point := r["timeline"].([]any)[0].(map[string]any)
	for _, k := range []string{"t_s", "replicas", "requests", "errors", "p99_ms"} {
		if _, ok := point[k]; !ok {
			t.Errorf("timeline point lacks %q", k)
		}
	}
}

func TestSetSeedAndDurationOverride(t *testing.T) {
	f := writeTemp(t, "s.yaml", good)
	_, a, _ := runCLI("simulate", f, "-o", "json", "--seed", "9", "--duration", "1s", "--set", "spec.services[0].replicas=4")
	var r struct {
		Seed      int64   `json:"seed"`
		DurationS float64 `json:"duration_s"`
		Pods      []any   `json:"pods"`
	}
	if err := json.Unmarshal([]byte(a), &r); err != nil {
		t.Fatal(err)
	}
	if r.Seed != 9 || r.DurationS != 1 || len(r.Pods) != 4 {
		t.Fatalf("seed %d duration %g pods %d; want 9, 1, 4", r.Seed, r.DurationS, len(r.Pods))
	}
}

var positioned = regexp.MustCompile(`^[^:\s]+\.yaml:\d+:\d+: `)

func TestBadInputExitsTwoWithPosition(t *testing.T) {
	bad := strings.Replace(good, "threads: 2", "threads: two", 1)
	f := writeTemp(t, "bad.yaml", bad)
	for _, verb := range []string{"simulate", "validate"} {
		code, out, errOut := runCLI(verb, f)
		if code != exitBadInput {
			t.Errorf("%s: exit %d, want 2", verb, code)
		}
		if out != "" {
			t.Errorf("%s: wrote to stdout on bad input: %q", verb, out)
		}
		line := strings.SplitN(errOut, "\n", 2)[0]
		if !positioned.MatchString(line) || !strings.Contains(line, ":14:14:") {
			t.Errorf("%s: stderr %q, want FILE:14:14: message", verb, line)
		}
	}
}

func TestValidatePrintsNothingOnSuccess(t *testing.T) {
	code, out, errOut := runCLI("validate", writeTemp(t, "s.yaml", good))
	if code != exitOK || out != "" || errOut != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0 and silence", code, out, errOut)
	}
}

func TestWarningsDoNotFail(t *testing.T) {
	f := writeTemp(t, "s.yaml", strings.Replace(good, "replicas: 3", "replicas: 0", 1))
	code, _, errOut := runCLI("validate", f)
	if code != exitOK || !strings.Contains(errOut, "warning:") {
		t.Fatalf("exit %d stderr %q; want 0 and a warning", code, errOut)
	}
}

func TestUnknownFlagAndMissingFileAreBadInput(t *testing.T) {
	for _, args := range [][]string{{"simulate", "--nope"}, {"simulate", "/does/not/exist.yaml"}, {"simulate", "-o", "xml"}} {
		if code, _, _ := runCLI(args...); code != exitBadInput {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// A usage error ends with one pointer to the command's --help, whichever check found
// it: cobra's flags and arguments or a verb's own.
func TestBadUsagePointsToHelpOnce(t *testing.T) {
	for _, c := range []struct {
		args []string
		help string
	}{
		{[]string{"simulate", "--nope"}, "trafficlab simulate"},
		{[]string{"report"}, "trafficlab report"},
		{[]string{"load", "extra"}, "trafficlab load"},
		{[]string{"load"}, "trafficlab load"},
		{[]string{"emulate", "--cleanup", "extra"}, "trafficlab emulate"},
		{[]string{"serve", "--pod-json", "{}", "--scenario", "s.yaml"}, "trafficlab serve"},
	} {
		code, _, errOut := runCLI(c.args...)
		want := "See '" + c.help + " --help'."
		if code != exitBadInput || !strings.HasSuffix(errOut, "\n"+want+"\n") || strings.Count(errOut, "See '") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one %q at the end", c.args, code, errOut, want)
		}
	}
}

func TestEveryExampleIsValid(t *testing.T) {
	for _, ex := range examples.List() {
		data, _ := examples.Get(ex.Name)
		f := writeTemp(t, ex.Name, string(data))
		if code, _, errOut := runCLI("validate", f); code != exitOK || errOut != "" {
			t.Errorf("%s: exit %d: %s", ex.Name, code, errOut)
		}
		if ex.Description == "" {
			t.Errorf("%s has no metadata.description", ex.Name)
		}
	}
}

func TestTimelineCSV(t *testing.T) {
	csv := filepath.Join(t.TempDir(), "tl.csv")
	if code, _, errOut := runCLI("simulate", writeTemp(t, "s.yaml", good), "--timeline", csv, "-q"); code != exitOK {
		t.Fatal(errOut)
	}
	data, _ := os.ReadFile(csv)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	head := "t_s,interval_s,requests,errors,p99_ms,timeout,connection_refused,connection_reset,connection_closed,http_503," +
		"replicas_web,desired_replicas_web,ready_endpoints_web"
	if lines[0] != head || len(lines) != 3 || len(strings.Split(lines[1], ",")) != 13 {
		t.Fatalf("timeline CSV:\n%s", data)
	}
}

// A saved result renders again in every format, compares with another, and bad
// inputs exit 2 with the file named.
func TestReportAndCompare(t *testing.T) {
	dir := t.TempDir()
	save := func(name string, sets ...string) string {
		args := append([]string{"simulate", writeTemp(t, "s.yaml", good), "-o", "json", "-q"}, sets...)
		code, out, errOut := runCLI(args...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := save("a.json"), save("b.json", "--set", "spec.clients[0].threads=4")
	cases := []struct {
		args []string
		code int
		want string // in stdout, or in stderr when the code is not 0
	}{
		{[]string{"report", a}, exitOK, "Latencies"},
		{[]string{"report", a, "-o", "vegeta-json"}, exitOK, `"status_codes":{"200":`},
		{[]string{"report", a, "-o", "prometheus"}, exitOK, "# TYPE trafficlab_requests_total counter"},
		{[]string{"report", a, "-o", "vegeta-hist"}, exitBadInput, "spec.report.histogram"},
		{[]string{"report", a, "-o", "yaml"}, exitBadInput, `-o "yaml": want one of json, prometheus, text, vegeta-hist, vegeta-json`},
		{[]string{"report", writeTemp(t, "x.json", "{}")}, exitBadInput, "x.json: not a trafficlab result (-o json): no engine field"},
		{[]string{"compare", a, b}, exitOK, "a.json"},
		{[]string{"compare", a}, exitBadInput, "requires at least 2 arg(s)"},
	}
	for _, tc := range cases {
		code, out, errOut := runCLI(tc.args...)
		got := out
		if tc.code != exitOK {
			got = errOut
		}
		if code != tc.code || !strings.Contains(got, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q in:\n%s%s", tc.args, code, tc.code, tc.want, out, errOut)
		}
	}
}

// --html writes the page next to the usual output, with the scenario and its
// overrides inside it.
func TestHTMLFlag(t *testing.T) {
	page := filepath.Join(t.TempDir(), "run.html")
	code, out, errOut := runCLI("simulate", writeTemp(t, "s.yaml", good), "-q", "--html", page, "--set", "spec.clients[0].threads=3")
	if code != exitOK || !strings.Contains(out, "Latencies") {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!DOCTYPE html>", "# --set spec.clients[0].threads=3", "metadata: {name: cli}"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestRequestsCSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "requests.csv")
	code, out, errOut := runCLI("simulate", writeTemp(t, "s.yaml", good), "--requests", path, "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		Requests struct{ OK, Failed int64 }
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if int64(len(lines)) != r.Requests.OK+r.Requests.Failed || r.Requests.OK == 0 {
		t.Errorf("%d lines for %d ok and %d failed requests", len(lines), r.Requests.OK, r.Requests.Failed)
	}
	if f := strings.Split(lines[0], ","); len(f) != 12 || f[1] != "200" || f[7] != "caller" || f[10] != "http://web/" {
		t.Errorf("first line %q", lines[0])
	}
}

// The scenario reference sends a reader to `trafficlab libraries` for a client's
// default timeout: each profile's row gives it, from the profile.
func TestLibrariesListTimeouts(t *testing.T) {
	code, out, errOut := runCLI("libraries")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, c := range []struct{ library, timeout string }{
		{"dotnet-httpclient", "1m40s"}, // HttpClient.Timeout, 100 s
		{"fortio", "3s"},
		{"go-net-http", "none"}, // Client.Timeout zero
	} {
		if row := libraryRows(out, c.library)[0]; !strings.Contains(row, " "+c.timeout+" ") {
			t.Errorf("%s: row %q does not give the timeout %s", c.library, row, c.timeout)
		}
	}
}

// The second table says how each library resolves a headless Service's name,
// from its profile.
func TestLibrariesListResolution(t *testing.T) {
	_, out, _ := runCLI("libraries")
	for _, c := range []struct{ library, dns string }{
		{"okhttp", "answer kept 30s, first address"},
		{"go-net-http", "a lookup per connection, first address"},
		{"nginx-upstream-keepalive", "not modelled"},
	} {
		if rows := libraryRows(out, c.library); len(rows) != 2 || !strings.HasSuffix(strings.TrimSpace(rows[1]), c.dns) {
			t.Errorf("%s: rows %q, want the second to end %q", c.library, rows, c.dns)
		}
	}
}

// libraryRows are the lines of trafficlab libraries that start with lib's name.
func libraryRows(out, lib string) []string {
	var rows []string
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, lib+" ") {
			rows = append(rows, line)
		}
	}
	if len(rows) == 0 {
		rows = append(rows, "")
	}
	return rows
}

// Each example's line in the list is whole sentences: a cut at the YAML's line end
// left five of them mid-sentence.
func TestExamplesListEndsAtASentence(t *testing.T) {
	cases := []struct{ in, want string }{
		{"R4: over a link with 10 ms of delay. Between the Envoys HTTP/2 stalls.", "R4: over a link with 10 ms of delay."},
		{"R2: ab -c 100 against 1..6 pods, e.g. r1.yaml.", "R2: ab -c 100 against 1..6 pods, e.g. r1.yaml."},
		{"no period at all", "no period at all"},
	}
	for _, c := range cases {
		if got := firstSentence(c.in); got != c.want {
			t.Errorf("firstSentence(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	code, out, _ := runCLI("examples")
	if code != exitOK {
		t.Fatalf("examples: exit %d", code)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasSuffix(line, ".") {
			t.Errorf("examples cuts a description mid-sentence: %q", line)
		}
	}
}

// pflag reads a `quoted` word in a usage as the flag's argument name: a phrase there
// (`encode --to csv`) rendered as "--requests encode --to csv".
func TestFlagArgumentNamesAreOneWord(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if name, _ := pflag.UnquoteUsage(f); strings.ContainsAny(name, " \t") {
				t.Errorf("%s --%s: argument name %q", c.CommandPath(), f.Name, name)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(io.Discard, io.Discard))
}
