package report

import (
	"strings"
	"testing"

	"trafficlab/result"
)

// The overloads of the section's cases.
var overloadAutoscaled = result.Overload{Service: "api", OfferedRPS: 900, ServedRPS: 600, FinishedRPS: 600, Saturated: []string{"cpu", "workers"},
	CPUUtilization: 1, CPUPerRequestMS: 2, CoresPerPod: 0.5, HoldMS: 20, Workers: 4, PoolWaitersAtEnd: 3,
	Replicas: 3, ReplicasNeeded: 5, ReplicasPath: "spec.services[1].autoscaler.maxReplicas",
	Sweep: &result.OverloadSweep{Path: "spec.services[1].autoscaler.maxReplicas", From: 4, To: 7}}
var overloadAutoscaledSweep = "trafficlab sweep FILE --set 'spec.services[1].autoscaler.maxReplicas=4..7' --find 'min spec.services[1].autoscaler.maxReplicas where errors == 0'"

// 1,000/s × 10.01 ms = 10.01 workers, 5.005 pods at 2 a pod: 6 pods; the
// server queue holds requests the clients gave up on; the pods finished more
// than was answered in time.
var overloadWorkers = result.Overload{Service: "web", OfferedRPS: 1000, ServedRPS: 256, FinishedRPS: 795, Saturated: []string{"workers"},
	HoldMS: 10.01, Workers: 2, QueuedAtEnd: 6138, QueuedAbandonedAtEnd: 4138, Replicas: 4, ReplicasNeeded: 6,
	ReplicasPath: "spec.services[0].replicas", Sweep: &result.OverloadSweep{Path: "spec.services[0].replicas", From: 5, To: 8}}
var overloadLive = func() result.Overload { o := overloadWorkers; o.QueuedAbandonedAtEnd = 0; return o }()
var overloadPool = result.Overload{Service: "web", OfferedRPS: 2000, ServedRPS: 18, FinishedRPS: 1932, Saturated: []string{"pool"},
	PoolConnections: 10, PoolHoldMS: 23.1, PoolWaited: 58000, PoolWaitMS: 990, PoolWaitersAtEnd: 1990,
	ConnectionsNeeded: 47, MaxPerHostNeeded: 47, PoolPath: "spec.clients[0].connections.maxPerHost",
	Sweep: &result.OverloadSweep{Path: "spec.clients[0].connections.maxPerHost", From: 11, To: 66}}

// 11 pods needed, 8 fit at 1 core each; 3 more on 4-core nodes: 1 node.
var overloadNoRoom = result.Overload{Service: "web", OfferedRPS: 5000, ServedRPS: 306, FinishedRPS: 3340, Saturated: []string{"cpu"},
	CPUUtilization: 0.99, CPUPerRequestMS: 2, CoresPerPod: 0.989, Replicas: 8, PendingAtEnd: 4, ReplicasNeeded: 11,
	ReplicasPath: "spec.services[0].autoscaler.maxReplicas", PodRequestCores: 1, PodsFit: 8, NodesNeeded: 1, NodeCoresEach: 4}
var overloadFewAsked = func() result.Overload { o := overloadNoRoom; o.PendingAtEnd = 0; return o }()

// 4 pods at the end, 4 needed: the queue built while fewer served.
var overloadLate = result.Overload{Service: "web", OfferedRPS: 1500, ServedRPS: 388, FinishedRPS: 1461, Saturated: []string{"cpu"},
	CPUUtilization: 0.98, CPUPerRequestMS: 2.006, CoresPerPod: 0.976, Replicas: 4, ReplicasNeeded: 4,
	ReplicasPath: "spec.services[0].replicas", Sweep: &result.OverloadSweep{Path: "spec.services[0].replicas", From: 4, To: 5}}
var overloadNodeCPU = result.Overload{Service: "web", OfferedRPS: 6000, ServedRPS: 1179, FinishedRPS: 4002, Saturated: []string{"node_cpu"},
	NodeCores: 8, CPUUtilization: 1, CPUPerRequestMS: 2}
var nodesBusy = []result.Node{{Name: "n-0", CPUUtilization: 1}, {Name: "n-1", CPUUtilization: 0.99}}
var nodesRoom = []result.Node{{Name: "n-0", CPUUtilization: 1}, {Name: "n-1", CPUUtilization: 0.4}}

// overloadSectionCases are Results whose overload section must and must not say each thing.
var overloadSectionCases = []struct {
	name      string
	r         result.Result
	want, not []string
}{
	{"autoscaled, CPU and workers", result.Result{Overloads: []result.Overload{overloadAutoscaled}, Errors: result.Errors{Timeout: 1}},
		[]string{"Overload: api was offered 900 requests/s; 600/s were answered in time",
			"CPU: its pods used 100% of the CPU they could get (0.5 cores a pod), 2 ms of CPU a request.",
			"workers: every app worker of each pod (4 a pod) was busy, each request holding one for 20 ms.",
			"client pools: 3 requests waited for a pooled connection at the end",
			"the excess queued: 1 request timed out.",
			"Fix: more replicas (the autoscaler's maxReplicas). The offered load needs 900/s × 2 ms of CPU = 1.8 cores, 3.6 pods' worth at 0.5 cores a pod, " +
				"and 900/s × 20 ms held = 18 busy workers, 4.5 pods' worth at 4 a pod: fewer than 5 pods (3 now) would be more than 100% busy",
			overloadAutoscaledSweep},
		[]string{"throttled", "Fix: more cores", "after their clients had given up", "Pending"}},
	{"workers, the queue's abandoned requests", result.Result{Overloads: []result.Overload{overloadWorkers}},
		[]string{"Its pods finished 795/s: 539/s of them after their clients had given up",
			"6,138 requests waited for a worker at the end, 4,138 of them already given up on by their clients.",
			"1,000/s × 10.01 ms held = 10.01 busy workers, 5.005 pods' worth at 2 a pod: fewer than 6 pods (4 now)"},
		[]string{"10 ms held", "= 10 busy"}},
	{"workers, all queued requests awaited", result.Result{Overloads: []result.Overload{overloadLive}},
		[]string{"6,138 requests waited for a worker at the end."}, []string{"given up on by their clients"}},
	{"client pool", result.Result{Overloads: []result.Overload{overloadPool}, Errors: result.Errors{Timeout: 57456}},
		[]string{"client pools: their 10 connections (maxPerHost) were all busy, each request answered in time holding one for 23.1 ms: " +
			"they carry at most 10 / 23.1 ms = 433 requests/s (Little's law). 58,000 requests waited for a connection, 990 ms on average; 1,990 waited at the end.",
			"Fix: more connections (spec.clients[0].connections.maxPerHost), not more replicas: no resource of the pods ran out. " +
				"The offered load needs 2,000/s × 23.1 ms held = 46.2 busy connections: fewer than 47 (10 now)",
			"47 a client pod's pool at least",
			"trafficlab sweep FILE --set 'spec.clients[0].connections.maxPerHost=11..66'"},
		[]string{"Fix: more replicas", "the pools full of requests the pods were slow to answer"}},
	{"no room for the replicas", result.Result{Overloads: []result.Overload{overloadNoRoom}},
		[]string{"fewer than 11 pods (8 now, and 4 Pending) would be more than 100% busy",
			"Fix: more nodes.", "But the nodes' allocatable CPU takes only 8 such pods at 1 core of CPU request each",
			"fitting the other 3 takes 3 cores of requests more, 1 more node of 4 cores; the autoscaler already asks for 12."},
		[]string{"Fix: more replicas", "trafficlab sweep", "This sweep", "then more replicas"}},
	{"no room, the autoscaler asking too few", result.Result{Overloads: []result.Overload{overloadFewAsked}},
		[]string{"1 more node of 4 cores; then more replicas (spec.services[0].autoscaler.maxReplicas)."},
		[]string{"already asks"}},
	{"enough replicas at the end", result.Result{Overloads: []result.Overload{overloadLate}},
		[]string{"Fix: more replicas from the start (spec.services[0].replicas).", "fewer than 4 pods (4 now)",
			"It had 4 at the end, but fewer before: the queue built up while they were missing.",
			"trafficlab sweep FILE --set 'spec.services[0].replicas=4..5'"},
		[]string{"maxReplicas"}},
	{"more replicas needed than at the end", result.Result{Overloads: []result.Overload{overloadWorkers}}, nil,
		[]string{"from the start", "at the end, but fewer before"}},
	{"node cores, every node busy", result.Result{Overloads: []result.Overload{overloadNodeCPU}, Nodes: nodesBusy},
		[]string{"Fix: more cores. The offered load needs 6,000/s × 2 ms of CPU = 12 cores", "add nodes or cores: every node was busy."},
		[]string{"with room", "Fix: more replicas"}},
	{"node cores, a node with room", result.Result{Overloads: []result.Overload{overloadNodeCPU}, Nodes: nodesRoom},
		[]string{"so that the scheduler spreads them over nodes with room (n-1 was 40% busy)."},
		[]string{"every node was busy"}},
	{"nothing overloaded", result.Result{Errors: result.Errors{Timeout: 1}}, nil, []string{"Overload:", "Fix:"}},
}

// Each line of the overload section comes from a field of the Result: what
// saturated, the pool waiters, the autoscaler's maxReplicas, the nodes' room, the
// sweep; a result without overloads has no such section.
func TestOverloadSection(t *testing.T) {
	for _, c := range overloadSectionCases {
		var b strings.Builder
		writeOverloads(&b, &c.r)
		out := strings.Join(strings.Fields(b.String()), " ")
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: lacks %q:\n%s", c.name, w, b.String())
			}
		}
		for _, n := range c.not {
			if strings.Contains(out, n) {
				t.Errorf("%s: says %q:\n%s", c.name, n, b.String())
			}
		}
	}
}

// The sweep command is the run the Result records: its file and its own
// overrides, quoted for a shell, the swept path's own --set left to the sweep;
// FILE only when the run has no origin.
func TestSweepCommandFromOrigin(t *testing.T) {
	seed := int64(7)
	s := &result.OverloadSweep{Path: "spec.services[0].replicas", From: 9, To: 12}
	axis := "--set 'spec.services[0].replicas=9..12' --find 'min spec.services[0].replicas where errors == 0'"
	for _, c := range []struct {
		name   string
		origin *result.Origin
		want   string
	}{
		{"no origin", nil, "trafficlab sweep FILE " + axis},
		{"the built-in example", &result.Origin{}, "trafficlab sweep FILE " + axis},
		{"file, overrides, seed and duration", &result.Origin{File: "/tmp/my runs/overcpu.yaml",
			Sets: []string{"spec.clients[0].rate=2000/s", "spec.services[0].replicas=8", "metadata.name=it's"},
			Seed: &seed, DurationS: 10},
			"trafficlab sweep '/tmp/my runs/overcpu.yaml' --set 'spec.clients[0].rate=2000/s' --set 'metadata.name=it'\\''s' --seed 7 --duration 10s " + axis},
	} {
		if got := SweepCommand(c.origin, s); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}
