package simulate

import (
	"bytes"
	"strings"
	"testing"

	"trafficlab/report"
	"trafficlab/result"
)

// overloadedYAML is a service of 8 pods, 2 ms of CPU a request, offered 6,000/s by 4
// vegeta pods: 12 cores of work. pod is its pod spec, nodes its node pool.
func overloadedYAML(nodes, pod string) string {
	return `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: overloaded}
spec:
  duration: 10s
  seed: 1
  cluster:
    nodes: [` + nodes + `]
    network: {latency: 100us}
  services:
  - name: web
    replicas: 8
    pod: {` + pod + `serviceTime: {distribution: exponential, mean: 2ms}}
  clients:
  - name: load
    target: web
    replicas: 4
    rate: 1500/s
    library: vegeta
    timeout: 1s
`
}

// reportText is the text report of a scenario's run, its white space folded.
func reportText(t *testing.T, src string, sets ...string) string {
	t.Helper()
	return folded(t, runYAML(t, src, sets...))
}

// exampleText is the text report of an example's run, its white space folded.
func exampleText(t *testing.T, name string, sets ...string) string {
	t.Helper()
	return folded(t, runExample(t, name, sets...).Result())
}

func folded(t *testing.T, r *result.Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := report.Text(&b, r); err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// The explanations of runs a reviewer found contradicting themselves, checked on
// the runs: each sentence where it must appear and where it must not.
func TestExplanationsFitTheRuns(t *testing.T) {
	const r2 = "r2-rapid-scaling.yaml"
	cases := []struct {
		name      string
		out       func(t *testing.T) string
		want, not []string
	}{
		// 8 workers holding each request 10 ms serve 800 of the 1,000/s offered all
		// along: intervals in which every request timed out are not quiet ones.
		{"workers overloaded at a steady load", func(t *testing.T) string {
			return reportText(t, overworkersYAML, "spec.duration=30s")
		}, []string{"Overload: web was offered 1,000 requests/s"}, []string{"Slow share by load"}},
		{"every pod throttled", func(t *testing.T) string {
			return reportText(t, overloadedYAML(`{name: n, count: 4, cpu: "4"}`, `cpu: "1", `))
		}, []string{"Advice: raise or remove the CPU limit of all 8 pods of web."}, []string{"limit of web-"}},
		{"one service fills the nodes' cores", func(t *testing.T) string {
			return reportText(t, overloadedYAML(`{name: n, count: 4, cpu: "2"}`, ``))
		}, []string{"went to web's own pods alone", "Fix: more cores."}, []string{"raise the CPU request"}},
		{"scale-in, the app exits on SIGTERM", func(t *testing.T) string {
			return exampleText(t, r2, "spec.duration=100s")
		}, []string{"after its process exited on SIGTERM", "draining on SIGTERM (finish"}, []string{"already drains"}},
		{"scale-in, the app drains", func(t *testing.T) string {
			return exampleText(t, r2, "spec.duration=100s", "spec.services[0].pod.onSigterm.action=drain")
		}, []string{"after it closed its listener on SIGTERM to drain", "a preStop sleep longer than"},
			[]string{"exited on SIGTERM", "draining on SIGTERM (finish"}},
		{"a partition", func(t *testing.T) string {
			return reportText(t, `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: partition}
spec:
  duration: 30s
  seed: 1
  cluster:
    nodes: [{name: n, count: 3, cpu: "4"}]
    network: {latency: 200us}
  services:
  - name: web
    replicas: 3
    pod:
      serviceTime: {distribution: exponential, mean: 1ms}
  clients:
  - name: load
    target: web
    rate: 3000/s
    library: go-net-http
    timeout: 2s
  faults:
  - {name: cut, kind: partition, start: 10s, end: 20s, target: {pod: web-1}, direction: both}
`)
		}, []string{"failed requests during faults", "the partition fault cut on pod web-1 (both ways), 10s–20s:",
			"SYNs went unanswered and were sent again", "Network faults that ran: cut: partition of pod web-1 (both ways), 10s–20s.", "A fault that dropped packets ran (listed above)."},
			[]string{"which is what the slowest requests paid", "not attributed"}},
		{"no replicas", func(t *testing.T) string {
			return reportText(t, overloadedYAML(`{name: n, count: 4, cpu: "4"}`, ``), "spec.services[0].replicas=0", "spec.duration=2s")
		}, []string{"No ready endpoint: web had none for the whole run (spec.replicas is 0: give it replicas).",
			"12000 connections were refused meanwhile."}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := c.out(t)
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("report lacks %q:\n%s", w, out)
				}
			}
			for _, w := range c.not {
				if strings.Contains(out, w) {
					t.Errorf("report has %q:\n%s", w, out)
				}
			}
		})
	}
}
