package simulate

import (
	"slices"
	"strings"
	"testing"

	"trafficlab/result"
)

// A rolling restart of 4 pods with the default 25 % surge and unavailable (1 and 1),
// each new pod Ready 2 s after it is created. The Deployment controller's steps, worked
// by hand from rolling.go:
//
//	10 s: +1 new (5 pods), −1 old (3 old available ≥ 4−1), +1 new: 3 old, 2 new starting.
//	12 s: both new Ready: −2 old (5 available − 3), +2 new: 1 old, 4 new (2 starting).
//	14 s: −1 old: 4 new, all available. Done.
//
// Recreate deletes all 4 at 10 s; their IPs go 1 s later (podNetworkTeardown), the 4
// new pods are created then and are Ready at 13 s.
func TestRolloutSteps(t *testing.T) {
	cases := []struct {
		strategy   string
		done       float64
		maxPods    int // active pods at any interval's end
		minReady   int // ready endpoints at any interval's end
		newCreated []float64
	}{
		{"{type: RollingUpdate}", 14, 5, 3, []float64{10, 10, 12, 12}},
		{"{type: Recreate}", 13, 4, 0, []float64{11, 11, 11, 11}},
	}
	for _, tc := range cases {
		t.Run(tc.strategy, func(t *testing.T) {
			r := run(t, opts{duration: "20s", replicas: 4,
				pod:     "      startupDelay: {distribution: constant, value: 2s}\n      serviceTime: {distribution: constant, value: 1ms}",
				service: "    strategy: " + tc.strategy + "\n    rollouts: [{at: 10s}]",
				client:  "    rate: 100/s\n    connections: {reuse: none}"})
			if len(r.Rollouts) != 1 {
				t.Fatalf("%d rollouts, want 1", len(r.Rollouts))
			}
			ro := r.Rollouts[0]
			if ro.DoneS == nil || *ro.DoneS != tc.done {
				t.Errorf("done at %v, want %gs", ro.DoneS, tc.done)
			}
			if want := []string{"web-4", "web-5", "web-6", "web-7"}; !slices.Equal(ro.Created, want) {
				t.Errorf("created %v, want %v", ro.Created, want)
			}
			deleted := slices.Clone(ro.Deleted)
			slices.Sort(deleted)
			if want := []string{"web-0", "web-1", "web-2", "web-3"}; !slices.Equal(deleted, want) {
				t.Errorf("deleted %v, want every old pod", ro.Deleted)
			}
			for i, p := range r.Pods[4:] {
				if p.StartS != tc.newCreated[i] {
					t.Errorf("%s created at %gs, want %gs", p.Name, p.StartS, tc.newCreated[i])
				}
			}
			for _, p := range r.Timeline {
				if p.Replicas["web"] > tc.maxPods || p.ReadyEndpoints["web"] < tc.minReady {
					t.Errorf("t=%gs: %d pods, %d ready; want at most %d and at least %d",
						p.TS, p.Replicas["web"], p.ReadyEndpoints["web"], tc.maxPods, tc.minReady)
				}
			}
		})
	}
}

// minReadySeconds holds back each step until the new pods have been Ready that long:
// the 12 s and 14 s steps above come 5 s later each, done at 10 + 2·(2+5) = 24 s.
func TestRolloutMinReadySeconds(t *testing.T) {
	r := run(t, opts{duration: "30s", replicas: 4,
		pod:     "      startupDelay: {distribution: constant, value: 2s}\n      serviceTime: {distribution: constant, value: 1ms}",
		service: "    minReadySeconds: 5\n    rollouts: [{at: 10s}]",
		client:  "    rate: 100/s\n    connections: {reuse: none}"})
	if ro := r.Rollouts[0]; ro.DoneS == nil || *ro.DoneS != 24 {
		t.Errorf("done at %v, want 24s", ro.DoneS)
	}
}

// Two nodes of 1 core; pods request 600m, so each node takes one and the third pod
// waits Pending. When web-0 is killed, its node has room: at 5 s web-2's backoff (1 s
// after its attempt at 0 s) is over and it takes the room before the replacement,
// which waits in turn. At 0.5 s web-2 is still backing off: the replacement, tried at
// once, takes the room, and web-2 fails again when its backoff ends at 1 s.
func TestPendingPodsWaitForRoom(t *testing.T) {
	cases := []struct {
		kill      string
		scheduled string  // the pod that got web-0's room
		pendingS  float64 // how long it waited
		stillWait string
	}{
		{"5s", "web-2", 5, "web-3"},
		{"500ms", "web-3", 0, "web-2"},
	}
	for _, tc := range cases {
		t.Run(tc.kill, func(t *testing.T) {
			r := run(t, opts{duration: "10s", replicas: 3, nodes: `[{name: n, count: 2, cpu: "1"}]`,
				pod:    "      resources: {requests: {cpu: 600m}}\n      serviceTime: {distribution: constant, value: 1ms}",
				client: "    rate: 100/s\n    connections: {reuse: none}",
				faults: "  faults:\n  - {name: kill, kind: pod-kill, start: " + tc.kill + ", target: {pod: web-0}}"})
			pods := map[string]result.Pod{}
			for _, p := range r.Pods {
				pods[p.Name] = p
			}
			got, ok := pods[tc.scheduled]
			if !ok || got.Node != pods["web-0"].Node || got.PendingS != tc.pendingS {
				t.Fatalf("%s: %+v; want it on web-0's node %s after %gs Pending", tc.scheduled, got, pods["web-0"].Node, tc.pendingS)
			}
			if len(r.Pending) != 1 || r.Pending[0].Name != tc.stillWait {
				t.Fatalf("pending at the end %+v, want %s", r.Pending, tc.stillWait)
			}
			if want := "0/2 nodes are available: 2 Insufficient cpu"; !strings.Contains(r.Pending[0].Reason, want) {
				t.Errorf("reason %q, want %q", r.Pending[0].Reason, want)
			}
			// A pending pod counts as a replica, as the ReplicaSet counts it.
			if last := r.Timeline[len(r.Timeline)-1]; last.Replicas["web"] != 3 {
				t.Errorf("%d replicas at the end, want 3 (one Pending)", last.Replicas["web"])
			}
		})
	}
}

// A hard spread over hostnames on two nodes, one tainted: with the default
// nodeTaintsPolicy Ignore the tainted node is a domain of 0 pods, so the second
// pod fits nowhere and waits Pending with kube-scheduler's reason; with Honor
// the tainted node is left out and both pods run on the other.
func TestTopologySpreadOverATaintedNode(t *testing.T) {
	for _, tc := range []struct {
		policy  string
		pending int
	}{{"", 1}, {", nodeTaintsPolicy: Honor", 0}} {
		t.Run("policy"+tc.policy, func(t *testing.T) {
			r := run(t, opts{replicas: 2,
				nodes: `[{name: a, count: 1, cpu: "4"}, {name: b, count: 1, cpu: "4", taints: [{key: dedicated, value: batch, effect: NoSchedule}]}]`,
				pod: "      serviceTime: {distribution: exponential, mean: 1ms}\n" +
					"      topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}" + tc.policy + "}]",
				client: "    threads: 1"})
			if len(r.Pending) != tc.pending {
				t.Fatalf("pending %+v, want %d", r.Pending, tc.pending)
			}
			if tc.pending > 0 {
				want := "0/2 nodes are available: 1 node(s) didn't match pod topology spread constraints, 1 node(s) had untolerated taint(s)."
				if !strings.Contains(r.Pending[0].Reason, want) {
					t.Errorf("reason %q, want %q", r.Pending[0].Reason, want)
				}
			}
			for _, p := range r.Pods {
				if p.Node != "a-0" {
					t.Errorf("pod %s on %s, want a-0", p.Name, p.Node)
				}
			}
		})
	}
}
