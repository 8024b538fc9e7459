package report_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"trafficlab/examples"
	"trafficlab/report"
	"trafficlab/result"
)

// callGraph is a frontend calling a cart that calls a db, and an ads service the
// frontend calls at once with the db, optionally; --set lines change it per case.
const callGraph = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: shop}
spec:
  duration: 10s
  cluster:
    endpointPropagation: {latency: 300ms, jitter: 0s}
  services:
  - name: frontend
    replicas: 2
    pod:
      serviceTime: {distribution: exponential, mean: 1ms}
      calls:
      - {service: cart}
      - parallel: [{service: db}, {service: ads, optional: true}]
      client: {library: curl-loop}
  - name: cart
    replicas: 2
    pod:
      serviceTime: {distribution: exponential, mean: 1ms}
      calls: [{service: db}]
      client: {library: curl-loop}
  - name: db
    replicas: 3
    pod:
      serviceTime: {distribution: exponential, mean: 1ms}
  - name: ads
    replicas: 1
    pod:
      serviceTime: {distribution: exponential, mean: 2ms}
  clients:
  - name: users
    target: frontend
    rate: 100/s
`

func runGraph(t *testing.T, sets ...string) (*result.Result, string) {
	t.Helper()
	r := simulateSource(t, "shop.yaml", []byte(callGraph), sets...)
	var b bytes.Buffer
	if err := report.Text(&b, r); err != nil {
		t.Fatal(err)
	}
	return r, b.String()
}

// The calls section draws the graph as a tree from the client, each service's
// calls under the call that reaches it, with the figures of the Result's edges.
func TestCallsTreeDrawsTheEdges(t *testing.T) {
	r, text := runGraph(t)
	for _, want := range []string{
		"users → frontend ",
		"├─ frontend → cart ",
		"│  └─ cart → db ",
		"├─ frontend → db ",
		"└─ frontend → ads ",
		"Services (time at their pods",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
	for _, e := range r.Edges {
		row := lineWith(text, e.From+" → "+e.To+" ")
		if rate := fmt.Sprintf("%.1f/s", float64(e.Requests)/r.DurationS); !strings.Contains(row, rate) {
			t.Errorf("row %q lacks the rate %s", row, rate)
		}
	}
	// Nothing failed: no call failure is explained, no pod is blamed.
	for _, not := range []string{"with a 503 because", "Where the errors came from"} {
		if strings.Contains(text, not) {
			t.Errorf("a run without errors says %q:\n%s", not, text)
		}
	}
}

func lineWith(text, s string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// A run whose services make no calls has no calls section.
func TestNoCallsNoCallsSection(t *testing.T) {
	_, text := runGraph(t, "spec.services[0].pod.calls=[]", "spec.services[1].pod.calls=[]")
	for _, not := range []string{"Calls (", "Services (time at their pods"} {
		if strings.Contains(text, not) {
			t.Errorf("a run without calls says %q:\n%s", not, text)
		}
	}
}

// The db scaled in from 3 pods to 1 mid-run (a rollout would do as well): its
// deleted pods refuse the new connections kube-proxy still sends them, the cart
// and the frontend answer 503s, and the report says which calls failed and blames
// the deleted pods for every failed attempt, the 503s being the calls' doing.
func TestCallFailuresAreExplainedAndAttributed(t *testing.T) {
	r, text := runGraph(t, "spec.services[2].rollouts=[{at: 5s}]")
	var byCalls int64
	for _, s := range r.Services {
		byCalls += s.Errors
		if s.Errors == 0 {
			if strings.Contains(text, s.Name+" answered ") {
				t.Errorf("%s answered no 503, but the text says it did:\n%s", s.Name, text)
			}
			continue
		}
		want := fmt.Sprintf("%s answered %d requests with a 503 because a call it made still failed after its retries", s.Name, s.Errors)
		if s.Errors == 1 {
			want = strings.Replace(want, "requests", "request", 1)
		}
		if !strings.Contains(strings.Join(strings.Fields(text), " "), want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
	if byCalls == 0 {
		t.Fatalf("the db's rollout failed no call; the case tests nothing:\n%s", text)
	}
	failures := r.Errors
	for _, e := range r.Edges {
		failures.AddAll(e.AttemptErrors)
	}
	var blamed int64
	for _, p := range r.Pods {
		blamed += p.Errors.Total()
	}
	want := fmt.Sprintf("Where the errors came from: %d of %d failed attempts (the clients' requests and the services' calls)", blamed, failures.Total())
	if !strings.Contains(text, want) {
		t.Errorf("the text lacks %q:\n%s", want, text)
	}
	if line := fmt.Sprintf("answered 503 by a service because a call it made failed: %d", byCalls); !strings.Contains(text, line) {
		t.Errorf("the text lacks %q:\n%s", line, text)
	}
	if blamed+byCalls != failures.Total() || strings.Contains(text, "not attributed") {
		t.Errorf("%d blamed and %d 503s of calls for %d failures; every failure here has a cause:\n%s", blamed, byCalls, failures.Total(), text)
	}
}

// The services' and calls' figures that sweep tabulates and --find tests read the
// Result's own values, and a run without calls has none of them.
func TestGraphFiguresReadTheResult(t *testing.T) {
	r, _ := runGraph(t, "spec.services[2].rollouts=[{at: 5s}]")
	figs := report.GraphFigures(r)
	if want := 4*len(r.Services) + 6*len(r.Edges); len(figs) != want {
		t.Errorf("%d figures, want %d: 4 per service and 6 per call", len(figs), want)
	}
	for _, e := range r.Edges {
		name := "edge." + e.From + "." + e.To + "."
		for fig, want := range map[string]float64{"requests": float64(e.Requests), "attempts": float64(e.Attempts),
			"retries": float64(e.Retries), "errors": float64(e.Errors.Total()), "p50_ms": e.LatencyMS.P50, "p99_ms": e.LatencyMS.P99} {
			f, ok := report.FigureNamed(name + fig)
			if !ok || f.Of(r) != want {
				t.Errorf("%s%s = %v (found %v), want %v", name, fig, f.Of(r), ok, want)
			}
		}
	}
	for _, s := range r.Services {
		f, _ := report.FigureNamed("service." + s.Name + ".errors")
		if f.Of(r) != float64(s.Errors) {
			t.Errorf("service.%s.errors = %v, want %d", s.Name, f.Of(r), s.Errors)
		}
	}
	leaf, _ := runGraph(t, "spec.services[0].pod.calls=[]", "spec.services[1].pod.calls=[]")
	if figs := report.GraphFigures(leaf); len(figs) != 0 {
		t.Errorf("a run without calls has figures %v", figs)
	}
}

// compare shows the calls' rows when a result has calls, a "-" for a result without
// that call, and none at all between results without calls.
func TestCompareShowsTheCalls(t *testing.T) {
	graph, _ := runGraph(t)
	leaf, _ := runGraph(t, "spec.services[0].pod.calls=[]", "spec.services[1].pod.calls=[]")
	var b bytes.Buffer
	if err := report.Compare(&b, []string{"graph", "leaf"}, []*result.Result{graph, leaf}); err != nil {
		t.Fatal(err)
	}
	row := lineWith(b.String(), "calls frontend → cart p99")
	if f := strings.Fields(row); len(f) < 2 || f[len(f)-1] != "-" {
		t.Errorf("row %q: want the leaf run's cell to be -", row)
	}
	b.Reset()
	if err := report.Compare(&b, []string{"a", "b"}, []*result.Result{leaf, leaf}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "calls ") || strings.Contains(b.String(), "p99 at its pods") {
		t.Errorf("results without calls compare their calls:\n%s", b.String())
	}
}

// The slow requests' critical path is told when requests were slow, with the
// Result's largest part first, and not at all when none was.
func TestSlowPathIsToldOnlyOfSlowRequests(t *testing.T) {
	r, text := runGraph(t, "spec.report.slowThreshold=3ms")
	if r.Slow == 0 || len(r.SlowPath) == 0 {
		t.Fatalf("no slow request over 3 ms; the case tests nothing: slow %d, path %+v", r.Slow, r.SlowPath)
	}
	flat := strings.Join(strings.Fields(text), " ")
	top := r.SlowPath[0]
	want := fmt.Sprintf("spent their time along their calls (at each step, the call that ended last): %s of it is", strings.TrimSpace(fmt.Sprintf("%.0f%%", top.ShareOfTail*100)))
	if !strings.Contains(flat, want) {
		t.Errorf("the text lacks %q:\n%s", want, text)
	}
	_, quiet := runGraph(t)
	if strings.Contains(quiet, "along their calls") {
		t.Errorf("a run without slow requests tells their path:\n%s", quiet)
	}
}

// Retries are told per call retried much, and their multiplication where two tiers
// in a row retry: the retry storm's frontend and orders both do; with the orders
// service's retries off, only the frontend's are told; with none, nothing is.
func TestRetriesAreToldWhereTheyMultiply(t *testing.T) {
	src, err := examples.Get("calls-retry-storm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := func(sets ...string) string {
		var b bytes.Buffer
		if err := report.Text(&b, simulateSource(t, "storm.yaml", src, sets...)); err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(b.String()), " ")
	}
	both := text()
	for _, want := range []string{"Retried calls, in attempts per call: frontend → orders", ", orders → db", "Retries at two tiers multiply: each of frontend's calls to orders became"} {
		if !strings.Contains(both, want) {
			t.Errorf("with retries at both tiers the text lacks %q:\n%s", want, both)
		}
	}
	one := text("spec.services[1].pod.calls[0].retries=0")
	if !strings.Contains(one, "Retried calls, in attempts per call: frontend → orders") || strings.Contains(one, "multiply") || strings.Contains(one, "orders → db 1") {
		t.Errorf("with retries at the frontend only the text should tell its retries alone:\n%s", one)
	}
	none := text("spec.services[0].pod.calls[0].retries=0", "spec.services[1].pod.calls[0].retries=0")
	if strings.Contains(none, "Retried calls") {
		t.Errorf("without retries the text tells some:\n%s", none)
	}
}
