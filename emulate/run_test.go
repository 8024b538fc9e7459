package emulate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"trafficlab/emulate/cgroup"
	"trafficlab/emulate/emutest"
	"trafficlab/model/kubeproxy"
	"trafficlab/result"
	"trafficlab/scenario"
)

var (
	buildOnce sync.Once
	exe       string
	buildErr  error
)

// trafficlab builds the binary the pods run (`trafficlab serve`), once per test run.
func trafficlab(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "trafficlab-emulate-test-")
		if err != nil {
			buildErr = err
			return
		}
		exe = filepath.Join(dir, "trafficlab")
		out, err := exec.Command("go", "build", "-o", exe, "trafficlab/cmd/trafficlab").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return exe
}

func TestMain(m *testing.M) {
	code := m.Run()
	if exe != "" {
		os.RemoveAll(filepath.Dir(exe))
	}
	os.Exit(code)
}

const smallCluster = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: small}
spec:
  duration: 3s
  seed: 1
  cluster:
    proxyMode: %s
    nodes: [{name: node, count: 2}]
  services:
  - name: web
    replicas: 3
    pod: {serviceTime: {distribution: constant, value: 200us}, cpu: 500m}
  clients:
  - name: caller
    target: web
    threads: 2
    connections: {reuse: %s}
`

// A small scenario run for real in each proxy mode: new connections spread over
// every pod, reused ones stay on the pods they opened to, the Result is filled as
// simulate fills it, and nothing of the run is left afterwards.
func TestRunsAScenarioForReal(t *testing.T) {
	emutest.NeedRoot(t, "ip", "iptables-restore", "nft")
	for _, tc := range []struct {
		mode  kubeproxy.Mode
		reuse string
	}{
		{kubeproxy.Iptables, scenario.ReuseNone},
		{kubeproxy.Nftables, scenario.ReuseNone},
		{kubeproxy.Userspace, scenario.ReuseNone},
		{kubeproxy.Iptables, scenario.ReusePerThread},
	} {
		t.Run(tc.mode.String()+"-"+tc.reuse, func(t *testing.T) {
			r := emulateDoc(t, "small.yaml", fmt.Sprintf(smallCluster, tc.mode, tc.reuse))
			if r.Engine != "emulate" || r.Requests.OK < 500 || r.Requests.Failed != 0 || r.DurationS != 3 {
				t.Fatalf("engine %q, requests %+v in %gs; want hundreds answered, none failed, in 3s", r.Engine, r.Requests, r.DurationS)
			}
			var reached, conns int64
			for _, p := range r.Pods {
				if p.Requests > 0 {
					reached++
				}
				conns += p.Connections
				if p.Requests > 0 && p.CPUCores <= 0 || p.Throttling == nil {
					t.Errorf("pod %s: %g cores, throttling %v; want its cgroup's figures", p.Name, p.CPUCores, p.Throttling)
				}
			}
			if tc.reuse == scenario.ReuseNone {
				// Each of ≥500 connections picks one of 3 pods: that one gets none has
				// probability 3·(2/3)^500, nothing.
				if reached != 3 || conns != r.Requests.OK {
					t.Errorf("%d pods reached over %d connections for %d requests; want all 3, a connection per request", reached, conns, r.Requests.OK)
				}
			} else if conns != 2 || reached > 2 {
				t.Errorf("%d connections reached %d pods; want 2 threads' connections, pinned", conns, reached)
			}
			if len(r.Timeline) != 3 || r.Timeline[1].Requests == 0 || r.Timeline[1].P99MS <= 0 {
				t.Errorf("timeline %+v; want 3 intervals with requests and percentiles", r.Timeline)
			}
			if r.Clients[0].PodsReached != int(reached) {
				t.Errorf("client reached %d pods, the pods say %d", r.Clients[0].PodsReached, reached)
			}
			var sum int64
			for _, pt := range r.Timeline {
				sum += pt.Requests
			}
			if sum != r.Requests.Total {
				t.Errorf("timeline sums to %d, total %d", sum, r.Requests.Total)
			}
		})
	}
}

// The cluster's latency is added on the way to each service pod and back: a
// request's round trip grows by twice it, as in simulate. The relay never lets a
// packet go early (emulate/delay), so no request comes back sooner than 2 × 5 ms.
// Above that come the relay's accuracy target (0.25 ms a traversal) and this
// machine's noise, measured: the same run undelayed, whose p90 over its p50 is how
// far one request's time wanders here, and, once per traversal, the medians of a
// probe's timer wake-up and hand-off to a goroutine during the delayed run
// (emutest.WakeupProbe), the two waits of a packet in the relay that its lead
// cannot take back, as they are at the median request.
func TestLatencyIsAddedPerHop(t *testing.T) {
	emutest.NeedRoot(t, "ip", "iptables-restore", "iptables")
	doc := fmt.Sprintf(smallCluster, kubeproxy.Iptables, scenario.ReusePerThread)
	base := emulateDoc(t, "undelayed.yaml", doc).LatencyMS
	const latency, late = 5.0, 0.25 // ms
	doc = strings.Replace(doc, "    nodes: [{name: node, count: 2}]\n", "    nodes: [{name: node, count: 2}]\n    network: {latency: 5ms}\n", 1)
	probe, err := emutest.StartWakeupProbe(5 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	r := emulateDoc(t, "latency.yaml", doc)
	probe.Stop()
	timer, handoff := emutest.Quantile(probe.Timer, 0.5), emutest.Quantile(probe.Handoff, 0.5)
	wait := float64(timer+handoff) / float64(time.Millisecond)
	noise := base.P90 - base.P50
	hi := base.P50 + noise + 2*(latency+late+wait)
	t.Logf("undelayed p50 %.3f ms, p90 %.3f ms; delayed min %.3f ms, p50 %.3f ms; %d probes: timer p50 %v, hand-off p50 %v", base.P50, base.P90, r.LatencyMS.Min, r.LatencyMS.P50, len(probe.Timer), timer, handoff)
	if got := r.LatencyMS; got.Min < 2*latency || got.P50 > hi || r.Requests.Failed != 0 {
		t.Errorf("min %.3f ms, p50 %.3f ms, %d failed; want every request at least %.0f ms, p50 at most %.3f ms and none failed: the undelayed p50 %.3f ms and its p90 - p50 %.3f ms (this machine's noise), plus twice the delay, the relay's target and this machine's median timer wake-up and hand-off during the run, %.3f ms",
			got.Min, got.P50, r.Requests.Failed, 2*latency, hi, base.P50, noise, wait)
	}
}

const rollout = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: rollout}
spec:
  duration: 6s
  seed: 1
  cluster:
    proxyMode: %s
    nodes: [{name: node, count: 2}]
  services:
  - name: web
    replicas: 3
    pod: {serviceTime: {distribution: constant, value: 1ms}, cpu: 500m}
    rollouts: [{at: 1s}]
  clients:
  - name: caller
    target: web
    threads: 4
    connections: {reuse: none}
`

// R2 for real: old pods exit at SIGTERM while each node's rules still send new
// connections to them, so iptables refuses some (the pod's address answers a SYN
// to its closed port with a reset); the userspace proxy retries a refused dial on
// the next pod, so none is refused or reset. Each of the two deletions leaves a
// pod in the rules for at least the propagation latency, 200 ms, while about a
// third of some 1,000 new connections a second pick it: far above 20.
func TestScaleInResetsUnderIptablesNotUserspace(t *testing.T) {
	emutest.NeedRoot(t, "ip", "iptables-restore", "nft")
	for _, mode := range []kubeproxy.Mode{kubeproxy.Iptables, kubeproxy.Userspace} {
		t.Run(mode.String(), func(t *testing.T) {
			r := emulateDoc(t, "rollout.yaml", fmt.Sprintf(rollout, mode))
			deleted := 0
			for _, p := range r.Pods {
				if p.DeletedS != nil && p.EndS != nil && *p.EndS >= *p.DeletedS {
					deleted++
				}
			}
			if deleted != 2 || len(r.Rollouts) != 1 {
				t.Fatalf("%d pods deleted and ended, rollouts %+v; want the rollout's 2 within 6s", deleted, r.Rollouts)
			}
			refused := r.Errors.ConnectionRefused + r.Errors.ConnectionReset
			if mode == kubeproxy.Iptables && refused < 20 || mode == kubeproxy.Userspace && refused != 0 {
				t.Errorf("%s: %d refused or reset (%+v) of %d requests", mode, refused, r.Errors, r.Requests.Total)
			}
		})
	}
}

// A timed loss fault is on from its start to its end only: while it is, a lost
// segment costs at least TCP's 200 ms minimum RTO (include/net/tcp.h), and with
// 5 % of packets lost both ways more than 1 % of exchanges lose one, so those
// seconds' p99 is over 200 ms; before, well under half that (the pods' 500m CPU
// limit alone can stall a request for most of a 100 ms CFS period). After it, a connection
// may still be in RTO backoff for a while, so the last second is checked for
// recovery: a p50 of a fraction of a millisecond and five times the requests.
func TestTimedLossFault(t *testing.T) {
	emutest.NeedRoot(t, "ip", "iptables-restore", "nft")
	doc := strings.Replace(fmt.Sprintf(smallCluster, kubeproxy.Iptables, scenario.ReusePerThread), "duration: 3s", "duration: 4s", 1) +
		"  faults: [{kind: loss, start: 1s, end: 3s, loss: \"5%\", direction: both, target: {service: web}}]\n"
	r := emulateDoc(t, "loss-fault.yaml", doc)
	tl := r.Timeline
	if len(tl) != 4 {
		t.Fatalf("%d timeline intervals, want 4", len(tl))
	}
	for i, pt := range tl {
		t.Logf("second %d: %d requests, p50 %.2f ms, p99 %.1f ms", i, pt.Requests, pt.P50MS, pt.P99MS)
	}
	if tl[0].P99MS > 100 || tl[1].P99MS < 200 || tl[2].P99MS < 200 {
		t.Errorf("p99 by second %.1f, %.1f, %.1f ms: want under 100 ms before the fault, over 200 ms during it", tl[0].P99MS, tl[1].P99MS, tl[2].P99MS)
	}
	if tl[3].P50MS > 2 || tl[3].Requests < 5*tl[2].Requests {
		t.Errorf("after the fault: p50 %.2f ms, %d requests against %d during it; want recovered", tl[3].P50MS, tl[3].Requests, tl[2].Requests)
	}
}

const autoscaledDoc = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: hpa}
spec:
  duration: 10s
  seed: 1
  cluster:
    nodes: [{name: node, count: 2}]
  services:
  - name: web
    replicas: 1
    pod:
      serviceTime: {distribution: constant, value: 2ms}
      startupDelay: {distribution: constant, value: 500ms}
      resources: {requests: {cpu: 250m}, limits: {cpu: "1"}}
    autoscaler:
      minReplicas: 1
      maxReplicas: 3
      metrics: [{type: Resource, resource: {name: cpu, target: {type: AverageValue, averageValue: 100m}}}]
      controller: {syncPeriod: 2s, metricResolution: 1s}
  clients:
  - name: caller
    target: web
    threads: 4
    connections: {reuse: none}
`

// The HPA scales from the pods' real CPU: four threads keep the one pod near its
// 1-CPU limit, ten times the 100m target, so the first pass with a reading (the
// controller syncs every 2 s, metrics-server scrapes every 1 s) scales to the
// maximum, 3 (without behavior rules a scale-up may reach max(2×1, 4)); the new
// pods start 0.5 s later and take new connections.
func TestAutoscalerScalesOnRealCPU(t *testing.T) {
	emutest.NeedRoot(t, "ip", "iptables-restore")
	r := emulateDoc(t, "hpa.yaml", autoscaledDoc)
	if len(r.ScaleEvents) == 0 {
		t.Fatal("no scale event")
	}
	ev := r.ScaleEvents[0]
	if ev.From != 1 || ev.To != 3 || len(ev.Created) != 2 || ev.TS > 5 || !strings.Contains(ev.Reason, "cpu") {
		t.Errorf("first scale event %+v; want 1 → 3 by CPU, two pods created, within 5 s", ev)
	}
	if len(r.Pods) != 3 {
		t.Fatalf("%d pods, want 3", len(r.Pods))
	}
	for _, p := range r.Pods[1:] {
		if p.Requests == 0 || p.StartS < ev.TS {
			t.Errorf("new pod %s: %d requests, started at %.2fs; want requests after the scale event at %.2fs", p.Name, p.Requests, p.StartS, ev.TS)
		}
	}
}

// emulateDoc runs a scenario document for real, and checks nothing is left after.
func emulateDoc(t *testing.T, name, doc string) *result.Result {
	t.Helper()
	sc, _, diags := scenario.Load(name, []byte(doc), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var log strings.Builder
	plan, err := Check(sc)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(ctx, plan, Options{Exe: trafficlab(t), Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	checkNothingLeft(t)
	return r
}

// checkNothingLeft: no namespace, control group, node disk or process of this test
// process's runs remains.
func checkNothingLeft(t *testing.T) {
	t.Helper()
	mine := fmt.Sprintf("tl-%d-", os.Getpid())
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), mine) {
		t.Errorf("namespaces left behind:\n%s", out)
	}
	for _, dir := range []string{filepath.Join(cgroup.Root, cgroup.Parent), filepath.Join(cgroup.Root, "cpu", cgroup.Parent), filepath.Join(cgroup.Root, "cpuacct", cgroup.Parent)} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), mine) {
				t.Errorf("cgroup left behind: %s", filepath.Join(dir, e.Name()))
			}
		}
	}
	disks, _ := os.ReadDir(DisksDir)
	for _, e := range disks {
		if strings.HasPrefix(e.Name(), mine) {
			t.Errorf("node disk left behind: %s", filepath.Join(DisksDir, e.Name()))
		}
	}
	if loops, _ := exec.Command("losetup", "--list", "--noheadings", "--output", "BACK-FILE").Output(); strings.Contains(string(loops), filepath.Join(DisksDir, mine)) {
		t.Errorf("loop devices left behind:\n%s", loops)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		cmd, _ := os.ReadFile(p)
		if strings.Contains(string(cmd), exe) {
			t.Errorf("process left behind: %s", strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
}
