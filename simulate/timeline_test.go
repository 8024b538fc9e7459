package simulate

import (
	"math"
	"testing"
)

// The timeline's per-pod and per-node series are the run's totals cut into intervals:
// summed back, they give each pod's requests and each node's CPU time exactly. The
// run ends mid-interval (7.5 s of 1 s steps) so the last, shorter interval is checked
// too, and a pod killed mid-run keeps its requests.
func TestTimelineSeriesAddUpToTotals(t *testing.T) {
	r := runYAML(t, `
apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: series}
spec:
  duration: 7500ms
  seed: 3
  cluster:
    nodes: [{name: n, count: 3, cpu: "2"}]
  services:
  - name: web
    replicas: 4
    pod: {cpu: "1", serviceTime: {distribution: exponential, mean: 2ms}}
  clients:
  - name: c
    target: web
    rate: 900/s
    connections: {reuse: none}
  faults:
  - {name: kill, kind: pod-kill, start: 3s, target: {pod: web-1}}
`)
	perPod := map[string]int64{}
	perNode := map[string]float64{}
	for i, p := range r.Timeline {
		for name, n := range p.PodRequests {
			perPod[name] += n
		}
		span := r.TimelineIntervalS
		if i == len(r.Timeline)-1 {
			span = r.DurationS - p.TS
		}
		for name, cores := range p.NodeCPUCores {
			perNode[name] += cores * span
		}
		if p.Requests > 0 && !(p.P50MS <= p.P90MS && p.P90MS <= p.P99MS && p.P99MS <= p.P999MS) {
			t.Errorf("t=%gs: percentiles out of order: %g %g %g %g", p.TS, p.P50MS, p.P90MS, p.P99MS, p.P999MS)
		}
	}
	if got := r.Timeline[len(r.Timeline)-1].TS; got != 7 {
		t.Fatalf("last interval starts at %gs, want 7s", got)
	}
	for _, p := range r.Pods {
		if perPod[p.Name] != p.Requests {
			t.Errorf("%s: timeline sums to %d requests, pod has %d", p.Name, perPod[p.Name], p.Requests)
		}
	}
	if len(r.Pods) != 5 {
		t.Errorf("%d pods, want 5 (web-1 replaced)", len(r.Pods))
	}
	// Node utilisation is rounded to 4 digits of the node's capacity; each interval's
	// cores to 4 decimals: the sums agree within those roundings.
	for _, n := range r.Nodes {
		want := n.CPUUtilization * n.CPU * r.DurationS
		tol := 0.5e-4*n.CPU*r.DurationS + 0.5e-4*float64(len(r.Timeline))
		if got := perNode[n.Name]; math.Abs(got-want) > tol {
			t.Errorf("%s: timeline sums to %.5f core-s, node used %.5f (±%.5f)", n.Name, got, want, tol)
		}
	}
}

// The spectrum climbs to the maximum latency and counts every success.
func TestLatencySpectrum(t *testing.T) {
	r := runYAML(t, `
apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: spectrum}
spec:
  duration: 5s
  services:
  - name: web
    replicas: 2
    pod: {cpu: "1", serviceTime: {distribution: exponential, mean: 3ms}}
  clients:
  - {name: c, target: web, rate: 400/s}
`)
	s := r.LatencySpectrum
	if len(s) < 20 {
		t.Fatalf("%d steps, want a spectrum", len(s))
	}
	for i := 1; i < len(s); i++ {
		if s[i].Percentile < s[i-1].Percentile || s[i].MS < s[i-1].MS || s[i].Count < s[i-1].Count {
			t.Fatalf("step %d goes back: %+v after %+v", i, s[i], s[i-1])
		}
	}
	last := s[len(s)-1]
	if last.Percentile != 100 || last.Count != r.Requests.OK {
		t.Errorf("last step %+v, want 100%% of %d", last, r.Requests.OK)
	}
	// The spectrum reports each value as the top of its HDR bucket (3 digits).
	if math.Abs(last.MS-r.LatencyMS.Max) > r.LatencyMS.Max*1e-3+1e-3 {
		t.Errorf("spectrum ends at %g ms, max is %g ms", last.MS, r.LatencyMS.Max)
	}
}

// Above 200 pods the per-pod series are left out: they would grow as pods × points.
func TestNoPodSeriesForManyPods(t *testing.T) {
	r := run(t, opts{duration: "2s", replicas: 201, client: "    rate: 1000/s\n    connections: {reuse: none}"})
	for _, p := range r.Timeline {
		if p.PodRequests != nil {
			t.Fatalf("t=%gs: %d pods in the series of a 201-pod run", p.TS, len(p.PodRequests))
		}
	}
}
