package simulate

import (
	"slices"
	"testing"
	"time"

	"trafficlab/result"
	"trafficlab/sim"
)

const sec = sim.Time(time.Second)

// runScaling runs e to at, scales the service to replicas, and runs to the end.
func runScaling(e *Engine, at sim.Time, replicas int) *result.Result {
	e.k.Run(at)
	e.deployments.Scale(0, replicas, "test")
	e.Run(nil)
	return e.Result()
}

// exactPropagation makes every node hear of an endpoint change after exactly 300 ms.
const exactPropagation = "    endpointPropagation: {latency: 300ms, jitter: 0s}"

// Scale-in from 3 pods to 1 under one thread that opens a connection per request, as
// R2's ab at concurrency 1. With iptables, nftables and IPVS the nodes keep sending new
// connections to the deleted pods until their rules change, and the pods, which exit
// on SIGTERM, refuse them. The userspace proxy retries the next endpoint in its
// rotation, which reaches the live pod within three tries, so the client sees no
// refusal. At most the request in progress at the exit instant is cut off (EOF, or a
// reset when its connection was not yet accepted).
//
// With more threads sharing the rotation a userspace retry can land on dead pods four
// times running and the proxy gives up with a reset: its retries help, they do not
// guarantee.
func TestScaleInErrorsByProxyMode(t *testing.T) {
	const threads = 1
	for _, c := range []struct {
		mode    string
		refused bool
	}{{"iptables", true}, {"nftables", true}, {"ipvs", true}, {"userspace", false}} {
		e := build(t, opts{mode: c.mode, replicas: 3, duration: "10s", cluster: exactPropagation,
			client: "    threads: 1\n    library: curl-loop"})
		r := runScaling(e, 5*sec, 1)
		if got := r.Errors.ConnectionRefused > 0; got != c.refused {
			t.Errorf("%s: %d refused, want refusals: %v", c.mode, r.Errors.ConnectionRefused, c.refused)
		}
		if r.Errors.Timeout != 0 {
			t.Errorf("%s: errors %+v, want no timeouts", c.mode, r.Errors)
		}
		if cut := r.Errors.ConnectionClosed + r.Errors.ConnectionReset; cut > threads {
			t.Errorf("%s: %d requests cut off, more than the %d that can be in progress", c.mode, cut, threads)
		}
		// Every error is the doing of a deleted pod, within the second the rules
		// took to change.
		var blamed int64
		for _, p := range r.Pods {
			blamed += p.Errors.Total()
			if p.DeletedS == nil && p.Errors.Total() > 0 {
				t.Errorf("%s: pod %s was not deleted but caused %+v", c.mode, p.Name, p.Errors)
			}
		}
		if blamed != r.Errors.Total() {
			t.Errorf("%s: pods blamed for %d of %d errors", c.mode, blamed, r.Errors.Total())
		}
		for _, pt := range r.Timeline {
			if pt.Errors > 0 && pt.TS != 5 {
				t.Errorf("%s: %d errors in second %v, want them all in second 5", c.mode, pt.Errors, pt.TS)
			}
		}
	}
}

// ab stops at its first receive error, such as a refused connection; userspace mode
// never shows it one (R2).
func TestAbAbortsAtScaleInOnlyWithIptables(t *testing.T) {
	for _, c := range []struct {
		mode    string
		aborted bool
	}{{"iptables", true}, {"userspace", false}} {
		e := build(t, opts{mode: c.mode, replicas: 3, duration: "10s", cluster: exactPropagation,
			client: "    threads: 1\n    library: ab"})
		r := runScaling(e, 5*sec, 1)
		if got := r.Clients[0].RunsAborted > 0; got != c.aborted {
			t.Errorf("%s: %d runs aborted, want abort: %v", c.mode, r.Clients[0].RunsAborted, c.aborted)
		}
		if c.aborted && r.Timeline[7].Requests != 0 {
			t.Errorf("%s: %d requests after the abort", c.mode, r.Timeline[7].Requests)
		}
	}
}

// The standard fix: a preStop sleep longer than the endpoint change takes to reach
// every node, then a drain. No client sees an error: pooled connections to the
// draining pod are closed as idle or answered with Connection: close, and a request
// that crosses the server's FIN on a reused connection is resent by the library.
func TestPreStopAndDrainRemoveScaleInErrors(t *testing.T) {
	pod := "      serviceTime: {distribution: exponential, mean: 1ms}\n" +
		"      lifecycle: {preStop: {sleep: {seconds: 5}}}\n" +
		"      onSigterm: {action: drain}"
	// The last client is Go over HTTP/2 with POSTs, which no library resends on a
	// stale connection: streams that reach a draining pod before its GOAWAY reaches
	// the client are refused, and HTTP/2 clients resend those.
	for _, lib := range []string{"curl-loop", "go-net-http", "dotnet-httpclient", "ab",
		"go-net-http\n    connections: {protocol: http2}\n    request: {method: POST}"} {
		e := build(t, opts{replicas: 3, duration: "15s", pod: pod, client: "    threads: 6\n    library: " + lib})
		r := runScaling(e, 5*sec, 1)
		if r.Errors.Total() != 0 || r.Clients[0].RunsAborted != 0 {
			t.Errorf("%s: errors %+v, %d runs aborted; want none", lib, r.Errors, r.Clients[0].RunsAborted)
		}
		for _, p := range r.Pods {
			if p.DeletedS != nil && (p.EndS == nil || *p.EndS < 10 || *p.EndS > 10.1) {
				t.Errorf("%s: deleted pod %s ended at %v, want just after its 5 s preStop", lib, p.Name, deref(p.EndS))
			}
		}
		if r.Requests.OK < 1000 {
			t.Errorf("%s: only %d requests answered", lib, r.Requests.OK)
		}
	}
}

// New pods get traffic only from new connections: a .NET HttpClient that pools its
// connections forever keeps them on the old pods (the "new pods get no load"
// complaint); a connection lifetime spreads them; Go's small idle pool churns
// connections, and each new one may pick a new pod.
func TestNewPodsAndPinnedConnections(t *testing.T) {
	for _, c := range []struct {
		name, client string
		newGetLoad   bool
	}{
		{"dotnet forever", "    threads: 4\n    library: dotnet-httpclient", false},
		{"dotnet with a 2s lifetime", "    threads: 4\n    library: dotnet-httpclient\n    connections: {maxLifetime: 2s}", true},
		// A steady closed loop reuses its own connection; a think time lets the
		// concurrency move, and Go closes what exceeds its 2 idle connections.
		{"go, 2 idle per host", "    threads: 8\n    library: go-net-http\n" +
			"    thinkTime: {distribution: exponential, mean: 2ms}", true},
	} {
		e := build(t, opts{replicas: 2, duration: "30s", client: c.client})
		r := runScaling(e, 5*sec, 4)
		var newPods int64
		for _, p := range r.Pods[2:] {
			if p.StartS != 5 || p.ReadyS == nil {
				t.Errorf("%s: new pod %s created at %v, ready at %v", c.name, p.Name, p.StartS, deref(p.ReadyS))
			}
			newPods += p.Requests
		}
		if got := newPods > 0; got != c.newGetLoad {
			t.Errorf("%s: new pods served %d requests, want load: %v", c.name, newPods, c.newGetLoad)
		}
	}
}

// The pod's termination follows the kubelet's clock: preStop, then SIGTERM, and
// SIGKILL at the end of the grace period, never less than 2 s after SIGTERM.
func TestTerminationTiming(t *testing.T) {
	slow := "      serviceTime: {distribution: constant, value: 1ms}\n      waitTime: {distribution: constant, value: 100s}\n"
	quick := "      serviceTime: {distribution: constant, value: 1ms}\n"
	for _, c := range []struct {
		name  string
		pod   string
		ended float64 // seconds after the deletion at 5.5 s
	}{
		{"exit at once", quick, 0},
		{"preStop 3s then exit", quick + "      lifecycle: {preStop: {sleep: {seconds: 3}}}", 3},
		{"preStop longer than the grace period", quick +
			"      lifecycle: {preStop: {exec: {command: [sleep, '40']}}}\n      terminationGracePeriodSeconds: 30", 30},
		{"drain with nothing in progress", quick + "      onSigterm: {action: drain}", 0},
		{"drain cut by SIGKILL", slow + "      onSigterm: {action: drain}\n      terminationGracePeriodSeconds: 20", 20},
		{"drain cut by the grace floor", slow + "      onSigterm: {action: drain}\n      terminationGracePeriodSeconds: 10\n" +
			"      lifecycle: {preStop: {sleep: {seconds: 10}}}", 12},
		{"drain cut by its own timeout", slow + "      onSigterm: {action: drain, drainTimeout: 4s}", 4},
	} {
		// One request a second: a quick pod has none in progress at 5.5 s, a slow
		// one has all of them.
		e := build(t, opts{replicas: 1, duration: "60s", pod: c.pod, client: "    rate: 1/s\n    timeout: 1000s"})
		e.k.Run(5*sec + sec/2)
		e.life.Delete(0)
		e.Run(nil)
		p := e.Result().Pods[0]
		if p.EndS == nil || *p.EndS != 5.5+c.ended {
			t.Errorf("%s: ended at %v, want %v", c.name, deref(p.EndS), 5.5+c.ended)
		}
	}
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// A new pod is Ready after its start-up delay and its readiness probe's verdict:
// the prober probes at once and every period, ignoring results before
// initialDelaySeconds, and needs successThreshold successes in a row.
func TestReadinessTiming(t *testing.T) {
	for _, c := range []struct {
		name, probe string
		ready       float64 // seconds after creation at 5 s
	}{
		{"no probe", "", 2},
		{"probe at once", "      readinessProbe: {periodSeconds: 10}", 2},
		{"initial delay skips the first probe", "      readinessProbe: {initialDelaySeconds: 5, periodSeconds: 10}", 12},
		{"two successes in a row", "      readinessProbe: {periodSeconds: 3, successThreshold: 2}", 5},
	} {
		pod := "      serviceTime: {distribution: constant, value: 1ms}\n" +
			"      startupDelay: {distribution: constant, value: 2s}\n" + c.probe
		e := build(t, opts{replicas: 1, duration: "60s", pod: pod, client: "    rate: 1/s"})
		r := runScaling(e, 5*sec, 2)
		if p := r.Pods[1]; p.ReadyS == nil || *p.ReadyS != 5+c.ready {
			t.Errorf("%s: ready at %v, want %v", c.name, deref(p.ReadyS), 5+c.ready)
		}
	}
}

// Each node's rules change once the EndpointSlice update has reached it and its
// sync runner lets it sync: a deleted pod leaves node 0's rules exactly 300 ms after
// the deletion; two syncs may run back to back, a third waits a minSyncPeriod after
// the last.
func TestEndpointPropagation(t *testing.T) {
	e := build(t, opts{replicas: 4, duration: "10s", cluster: exactPropagation, client: "    rate: 1/s"})
	ms := sim.Time(time.Millisecond)
	steps := []struct {
		at         sim.Time
		programmed []int32 // node 0's rules just before at
		delete     int32   // then delete this pod; -1 none
	}{
		{1 * sec, []int32{0, 1, 2, 3}, 0},
		{1*sec + 300*ms, []int32{0, 1, 2, 3}, -1}, // the delivery at 1.3 s is not yet handled
		{1*sec + 300*ms + 1, []int32{1, 2, 3}, 1}, // first sync, a burst token
		{1*sec + 600*ms + 2, []int32{2, 3}, 2},    // second sync, the other token
		{2*sec + 600*ms + 1, []int32{2, 3}, -1},   // third: 0.6 tokens at 1.9 s, retried at 2.6 s
		{2*sec + 600*ms + 2, []int32{3}, -1},
	}
	for _, st := range steps {
		e.k.Run(st.at)
		if got := e.routing.Programmed(0, 0); !slices.Equal(got, st.programmed) {
			t.Errorf("at %v: node 0 programs %v, want %v", time.Duration(st.at), got, st.programmed)
		}
		if st.delete >= 0 {
			e.life.Delete(st.delete)
		}
	}
}

// pods[].errors are the failed requests a pod's removal caused, and only those. A
// timeout is one when the request went to the IP of a pod whose process had ended:
// with endpoint changes slow to reach the nodes and the IP released at once, new
// connections still go to the deleted pod's gone IP and time out. A pod that was
// never removed caused none: not when it answered too late because the load was
// more than it could serve, nor when a partition dropped its packets, nor when a
// client's sidecar gave up on its slow answer (a 503 after the per-try timeout).
func TestOnlyARemovedPodIsBlamedForErrors(t *testing.T) {
	slowRules := "    endpointPropagation: {latency: 3s, jitter: 0s}\n    podNetworkTeardown: 0s"
	for _, c := range []struct {
		name   string
		o      opts
		scale  bool // scale 3 → 1 at 5 s
		blamed bool
	}{
		{"scale-in to a gone IP", opts{replicas: 3, duration: "15s", cluster: slowRules,
			client: "    threads: 4\n    timeout: 500ms\n    connections: {reuse: none}"}, true, true},
		// 2 pods of 1 core at 2 ms a request carry 1,000/s; 1,500/s arrive.
		{"overload", opts{replicas: 2, duration: "10s",
			pod:    "      serviceTime: {distribution: exponential, mean: 2ms}\n      resources: {limits: {cpu: \"1\"}}",
			client: "    rate: 1500/s\n    timeout: 500ms"}, false, false},
		{"partition", opts{replicas: 1, duration: "10s",
			client: "    rate: 100/s\n    timeout: 1s\n    connections: {reuse: none}",
			faults: "  faults: [{kind: partition, start: 2s, end: 5s, target: {service: web}, direction: both}]"}, false, false},
		{"sidecar per-try timeout", opts{replicas: 1, duration: "5s",
			pod:    "      serviceTime: {distribution: constant, value: 20ms}",
			client: "    threads: 2\n    timeout: 1s\n    sidecar: {retries: {attempts: 0, perTryTimeout: 5ms}}"}, false, false},
	} {
		e := build(t, c.o)
		var r *result.Result
		if c.scale {
			r = runScaling(e, 5*sec, 1)
		} else {
			e.Run(nil)
			r = e.Result()
		}
		if r.Errors.Timeout+r.Errors.HTTP503 == 0 {
			t.Fatalf("%s: no timeouts or 503s; the case tests nothing", c.name)
		}
		var blamed int64
		for _, p := range r.Pods {
			blamed += p.Errors.Total()
			if p.EndS == nil && p.Errors.Total() > 0 {
				t.Errorf("%s: %s is still running but is blamed for %+v", c.name, p.Name, p.Errors)
			}
		}
		if got := blamed > 0; got != c.blamed {
			t.Errorf("%s: pods blamed for %d of %d errors (%+v), want blame: %v", c.name, blamed, r.Errors.Total(), r.Errors, c.blamed)
		}
	}
}
