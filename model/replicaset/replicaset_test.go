package replicaset

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// The pods of TestSortingActivePodsWithRanks, mirroring
// kubernetes/kubernetes pkg/controller/controller_utils_test.go's.
var (
	then1Month = now.AddDate(0, -1, 0)
	then2Hours = now.Add(-2 * time.Hour)
	then5Hours = now.Add(-5 * time.Hour)
	then8Hours = now.Add(-8 * time.Hour)
	zeroTime   time.Time

	unscheduledPod                      = rankedPod("unscheduled", "", PhasePending, false, 0, zeroTime, zeroTime, 0)
	scheduledPendingPod                 = rankedPod("pending", "node", PhasePending, false, 0, zeroTime, zeroTime, 0)
	unknownPhasePod                     = rankedPod("unknown-phase", "node", PhaseUnknown, false, 0, zeroTime, zeroTime, 0)
	runningNotReadyPod                  = rankedPod("not-ready", "node", PhaseRunning, false, 0, zeroTime, zeroTime, 0)
	runningReadyNoLastTransitionTimePod = rankedPod("ready-no-last-transition-time", "node", PhaseRunning, true, 0, zeroTime, zeroTime, 0)
	runningReadyNow                     = rankedPod("ready-now", "node", PhaseRunning, true, 0, now, now, 0)
	runningReadyThen                    = rankedPod("ready-then", "node", PhaseRunning, true, 0, then1Month, then1Month, 0)
	runningReadyNowHighRestarts         = rankedPod("ready-high-restarts", "node", PhaseRunning, true, 9001, now, now, 0)
	runningReadyNowCreatedThen          = rankedPod("ready-now-created-then", "node", PhaseRunning, true, 0, now, then1Month, 0)
	lowPodDeletionCost                  = rankedPod("low-deletion-cost", "node", PhaseRunning, true, 0, now, then1Month, 10)
	highPodDeletionCost                 = rankedPod("high-deletion-cost", "node", PhaseRunning, true, 0, now, then1Month, 100)
	unscheduled5Hours                   = rankedPod("unscheduled-5-hours", "", PhasePending, false, 0, then5Hours, then5Hours, 0)
	unscheduled8Hours                   = rankedPod("unscheduled-10-hours", "", PhasePending, false, 0, then8Hours, then8Hours, 0)
	ready2Hours                         = rankedPod("ready-2-hours", "", PhaseRunning, true, 0, then2Hours, then1Month, 0)
	ready5Hours                         = rankedPod("ready-5-hours", "", PhaseRunning, true, 0, then5Hours, then1Month, 0)
	ready10Hours                        = rankedPod("ready-10-hours", "", PhaseRunning, true, 0, then8Hours, then1Month, 0)
)

// rankedPod mirrors the helper "pod" there: restarts are only recorded for ready
// pods (containerStatuses is set only when ready).
func rankedPod(name, node string, phase Phase, ready bool, restarts int32, readySince, created time.Time, cost int32) Pod {
	p := Pod{Name: name, Node: node, Phase: phase, Created: created, DeletionCost: cost}
	if ready {
		p.Ready, p.ReadySince, p.Restarts = true, readySince, restarts
	}
	return p
}

// TestSortingActivePodsWithRanks mirrors kubernetes/kubernetes
// pkg/controller/controller_utils_test.go TestSortingActivePodsWithRanks,
// with both feature gates at their defaults (the case that disables
// PodDeletionCost is left out: the gate is not modelled): its equalities here, its
// inequalities in TestSortingActivePodsWithRanksInequality.
func TestSortingActivePodsWithRanks(t *testing.T) {
	equalityTests := []struct{ p1, p2 Pod }{
		{p1: unscheduledPod, p2: unscheduledPod},
		{p1: scheduledPendingPod, p2: scheduledPendingPod},
		{p1: unknownPhasePod, p2: unknownPhasePod},
		{p1: runningNotReadyPod, p2: runningNotReadyPod},
		{p1: runningReadyNowCreatedThen, p2: runningReadyNowCreatedThen},
		{p1: runningReadyNow, p2: runningReadyNow},
		{p1: runningReadyThen, p2: runningReadyThen},
		{p1: runningReadyNowHighRestarts, p2: runningReadyNowHighRestarts},
		{p1: runningReadyNowCreatedThen, p2: runningReadyNowCreatedThen},
		// Same log2 bucket (5h and 8h ago), equal (empty) UIDs.
		{p1: unscheduled5Hours, p2: unscheduled8Hours},
		{p1: ready5Hours, p2: ready10Hours},
	}
	for i, tc := range equalityTests {
		t.Run(fmt.Sprintf("Equality tests %d", i), func(t *testing.T) {
			if Less(tc.p1, tc.p2, 1, 1, now) || Less(tc.p2, tc.p1, 1, 1, now) {
				t.Errorf("expected pod %q to be equivalent to %q", tc.p1.Name, tc.p2.Name)
			}
		})
	}
}

// TestSortingActivePodsWithRanksInequality is the inequalities of
// TestSortingActivePodsWithRanks.
func TestSortingActivePodsWithRanksInequality(t *testing.T) {
	type podWithRank struct {
		pod  Pod
		rank int
	}
	inequalityTests := []struct{ lesser, greater podWithRank }{
		{podWithRank{unscheduledPod, 1}, podWithRank{scheduledPendingPod, 2}},
		{podWithRank{unscheduledPod, 2}, podWithRank{scheduledPendingPod, 1}},
		{podWithRank{scheduledPendingPod, 1}, podWithRank{unknownPhasePod, 2}},
		{podWithRank{unknownPhasePod, 1}, podWithRank{runningNotReadyPod, 2}},
		{podWithRank{runningNotReadyPod, 1}, podWithRank{runningReadyNoLastTransitionTimePod, 1}},
		{podWithRank{runningReadyNoLastTransitionTimePod, 1}, podWithRank{runningReadyNow, 1}},
		{podWithRank{runningReadyNow, 2}, podWithRank{runningReadyNoLastTransitionTimePod, 1}},
		{podWithRank{runningReadyNow, 1}, podWithRank{runningReadyThen, 1}},
		{podWithRank{runningReadyNow, 2}, podWithRank{runningReadyThen, 1}},
		{podWithRank{runningReadyNowHighRestarts, 1}, podWithRank{runningReadyNow, 1}},
		{podWithRank{runningReadyNow, 2}, podWithRank{runningReadyNowHighRestarts, 1}},
		{podWithRank{runningReadyNow, 1}, podWithRank{runningReadyNowCreatedThen, 1}},
		{podWithRank{runningReadyNowCreatedThen, 2}, podWithRank{runningReadyNow, 1}},
		{podWithRank{lowPodDeletionCost, 2}, podWithRank{highPodDeletionCost, 1}},
		{podWithRank{ready2Hours, 1}, podWithRank{ready5Hours, 1}},
	}
	for i, tc := range inequalityTests {
		t.Run(fmt.Sprintf("Inequality tests %d", i), func(t *testing.T) {
			l, g := tc.lesser, tc.greater
			if !Less(l.pod, g.pod, l.rank, g.rank, now) {
				t.Errorf("expected pod %q with rank %v to be less than %q with rank %v", l.pod.Name, l.rank, g.pod.Name, g.rank)
			}
			if Less(g.pod, l.pod, g.rank, l.rank, now) {
				t.Errorf("expected pod %q with rank %v not to be less than %q with rank %v", g.pod.Name, g.rank, l.pod.Name, l.rank)
			}
		})
	}
}

// The pods and cases of TestGetPodsToDelete, mirroring kubernetes/kubernetes
// pkg/controller/replicaset/replica_set_test.go's.
var (
	// an unscheduled, pending pod
	unscheduledPendingPodToDelete = Pod{Name: "unscheduled-pending-pod", UID: "u1", Phase: PhasePending}
	// a scheduled, pending pod
	scheduledPendingPodToDelete = Pod{Name: "scheduled-pending-pod", UID: "u2", Node: "fake-node", Phase: PhasePending}
	// a scheduled, running, not-ready pod
	scheduledRunningNotReadyPod = Pod{Name: "scheduled-running-not-ready-pod", UID: "u3", Node: "fake-node", Phase: PhaseRunning}
	// a scheduled, running, ready pod on fake-node-1
	scheduledRunningReadyPodOnNode1 = Pod{Name: "scheduled-running-ready-pod-on-node-1", UID: "u4", Node: "fake-node-1", Phase: PhaseRunning, Ready: true}
	// a scheduled, running, ready pod on fake-node-2
	scheduledRunningReadyPodOnNode2 = Pod{Name: "scheduled-running-ready-pod-on-node-2", UID: "u5", Node: "fake-node-2", Phase: PhaseRunning, Ready: true}
)

var podsToDeleteTests = []struct {
	name string
	pods []Pod
	// related defaults to pods if nil.
	related []Pod
	diff    int
	want    []Pod
}{
	{
		name: "len(pods) = 0 (i.e., diff = 0 too)",
		pods: []Pod{},
		diff: 0,
		want: []Pod{},
	},
	{
		name: "diff = len(pods)",
		pods: []Pod{scheduledRunningNotReadyPod, scheduledRunningReadyPodOnNode1},
		diff: 2,
		want: []Pod{scheduledRunningNotReadyPod, scheduledRunningReadyPodOnNode1},
	},
	{
		name: "diff < len(pods)",
		pods: []Pod{scheduledRunningReadyPodOnNode1, scheduledRunningNotReadyPod},
		diff: 1,
		want: []Pod{scheduledRunningNotReadyPod},
	},
	{
		name: "various pod phases and conditions, diff = len(pods)",
		pods: []Pod{
			scheduledRunningReadyPodOnNode1, scheduledRunningReadyPodOnNode1, scheduledRunningReadyPodOnNode2,
			scheduledRunningNotReadyPod, scheduledPendingPodToDelete, unscheduledPendingPodToDelete,
		},
		diff: 6,
		// Not sorted: all of them go.
		want: []Pod{
			scheduledRunningReadyPodOnNode1, scheduledRunningReadyPodOnNode1, scheduledRunningReadyPodOnNode2,
			scheduledRunningNotReadyPod, scheduledPendingPodToDelete, unscheduledPendingPodToDelete,
		},
	},
	{
		name: "various pod phases and conditions, diff = len(pods), relatedPods empty",
		pods: []Pod{
			scheduledRunningReadyPodOnNode1, scheduledRunningReadyPodOnNode1, scheduledRunningReadyPodOnNode2,
			scheduledRunningNotReadyPod, scheduledPendingPodToDelete, unscheduledPendingPodToDelete,
		},
		related: []Pod{},
		diff:    6,
		want: []Pod{
			scheduledRunningReadyPodOnNode1, scheduledRunningReadyPodOnNode1, scheduledRunningReadyPodOnNode2,
			scheduledRunningNotReadyPod, scheduledPendingPodToDelete, unscheduledPendingPodToDelete,
		},
	},
	{
		name: "scheduled vs unscheduled, diff < len(pods)",
		pods: []Pod{scheduledPendingPodToDelete, unscheduledPendingPodToDelete},
		diff: 1,
		want: []Pod{unscheduledPendingPodToDelete},
	},
	{
		name: "ready vs not-ready, diff < len(pods)",
		pods: []Pod{scheduledRunningReadyPodOnNode1, scheduledRunningNotReadyPod, scheduledRunningNotReadyPod},
		diff: 2,
		want: []Pod{scheduledRunningNotReadyPod, scheduledRunningNotReadyPod},
	},
	{
		name: "ready and colocated with another ready pod vs not colocated, diff < len(pods)",
		pods: []Pod{scheduledRunningReadyPodOnNode1, scheduledRunningReadyPodOnNode2},
		related: []Pod{
			scheduledRunningReadyPodOnNode1, scheduledRunningReadyPodOnNode2, scheduledRunningReadyPodOnNode2,
		},
		diff: 1,
		want: []Pod{scheduledRunningReadyPodOnNode2},
	},
	{
		name: "pending vs running, diff < len(pods)",
		pods: []Pod{scheduledPendingPodToDelete, scheduledRunningNotReadyPod},
		diff: 1,
		want: []Pod{scheduledPendingPodToDelete},
	},
	{
		name: "various pod phases and conditions, diff < len(pods)",
		pods: []Pod{
			scheduledRunningReadyPodOnNode1, scheduledRunningReadyPodOnNode2, scheduledRunningNotReadyPod,
			scheduledPendingPodToDelete, unscheduledPendingPodToDelete,
		},
		diff: 3,
		want: []Pod{unscheduledPendingPodToDelete, scheduledPendingPodToDelete, scheduledRunningNotReadyPod},
	},
}

// TestGetPodsToDelete mirrors kubernetes/kubernetes
// pkg/controller/replicaset/replica_set_test.go TestGetPodsToDelete. Pods
// are given by index into a shared table; names in expectations.
func TestGetPodsToDelete(t *testing.T) {
	for _, tc := range podsToDeleteTests {
		t.Run(tc.name, func(t *testing.T) {
			got := PodsToDeleteWithRelated(tc.pods, tc.related, tc.diff, now)
			if names(tc.pods, got) != namesOf(tc.want) {
				t.Errorf("got %s, want %s", names(tc.pods, got), namesOf(tc.want))
			}
		})
	}
}

func names(pods []Pod, idx []int) string {
	var ps []Pod
	for _, i := range idx {
		ps = append(ps, pods[i])
	}
	return namesOf(ps)
}

func namesOf(ps []Pod) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.Name
	}
	return fmt.Sprint(s)
}

// The doubled-up rule counts active related pods per node: a related pod that
// is terminating (or Succeeded/Failed) counts for nothing
// (getPodsRankedByRelatedPodsOnSameNode skips !IsPodActive).
func TestRankCountsOnlyActiveRelatedPods(t *testing.T) {
	pods := []Pod{
		{Name: "a", Node: "n1", Phase: PhaseRunning, Ready: true},
		{Name: "b", Node: "n2", Phase: PhaseRunning, Ready: true},
		{Name: "b-old", Node: "n2", Phase: PhaseRunning, Ready: true, Terminating: true},
		{Name: "b-done", Node: "n2", Phase: PhaseSucceeded},
		{Name: "a2", Node: "n1", Phase: PhaseRunning, Ready: true},
	}
	if got := Ranks(pods, pods); !slices.Equal(got, []int{2, 1, 1, 1, 2}) {
		t.Fatalf("Ranks = %v", got)
	}
	// a and a2 are doubled up on n1; a < a2 by name (Kubernetes leaves the
	// pair unordered).
	if got := PodsToDelete(pods, 2, now); !slices.Equal(got, []int{0, 4}) {
		t.Fatalf("PodsToDelete = %v, want [0 4]", got)
	}
}

// FilterActivePods runs before manageReplicas: inactive pods are never picked
// and n is capped at the active count.
func TestInactivePodsAreNeverChosen(t *testing.T) {
	pods := []Pod{
		{Name: "terminating", Node: "n", Phase: PhaseRunning, Terminating: true},
		{Name: "failed", Node: "n", Phase: PhaseFailed},
		{Name: "running", Node: "n", Phase: PhaseRunning, Ready: true},
		{Name: "pending", Node: "n", Phase: PhasePending},
	}
	if got := PodsToDelete(pods, 1, now); !slices.Equal(got, []int{3}) {
		t.Errorf("n=1: got %v, want [3]", got)
	}
	if got := PodsToDelete(pods, 10, now); !slices.Equal(got, []int{2, 3}) {
		t.Errorf("n=10: got %v, want [2 3] (all active, input order)", got)
	}
	if got := PodsToDelete(pods, 0, now); len(got) != 0 {
		t.Errorf("n=0: got %v", got)
	}
	if got := PodsToDelete(pods, -1, now); len(got) != 0 {
		t.Errorf("n=-1: got %v", got)
	}
}

// Rule 6 with LogarithmicScaleDown: ready 70s and 100s ago fall in the same
// floor(log2(ns)) bucket (36), so the UID decides and the restart count
// (rule 7) is never consulted. With a zero now the exact times decide.
func TestReadyTimeLogBucketsFallToUID(t *testing.T) {
	young := Pod{Name: "young", UID: "b", Node: "n", Phase: PhaseRunning, Ready: true,
		ReadySince: now.Add(-70 * time.Second), Restarts: 5}
	old := Pod{Name: "old", UID: "a", Node: "n", Phase: PhaseRunning, Ready: true,
		ReadySince: now.Add(-100 * time.Second)}
	pods := []Pod{young, old}
	if got := PodsToDelete(pods, 1, now); !slices.Equal(got, []int{1}) {
		t.Errorf("same bucket: got %v, want [1] (lower UID)", got)
	}
	if got := PodsToDelete(pods, 1, time.Time{}); !slices.Equal(got, []int{0}) {
		t.Errorf("zero now: got %v, want [0] (more recently ready)", got)
	}
	// Different buckets (10s vs 100s): the more recently ready goes first.
	young.ReadySince = now.Add(-10 * time.Second)
	if got := PodsToDelete([]Pod{old, young}, 1, now); !slices.Equal(got, []int{1}) {
		t.Errorf("different buckets: got %v, want [1]", got)
	}
}

// Rule 8: newer creation first, in log2 buckets; the same bucket falls to UID.
func TestCreationLogBuckets(t *testing.T) {
	a := Pod{Name: "a", UID: "z", Node: "n", Phase: PhasePending, Created: now.Add(-70 * time.Second)}
	b := Pod{Name: "b", UID: "y", Node: "n", Phase: PhasePending, Created: now.Add(-100 * time.Second)}
	c := Pod{Name: "c", UID: "x", Node: "n", Phase: PhasePending, Created: now.Add(-time.Hour)}
	pods := []Pod{c, a, b}
	if got := PodsToDelete(pods, 2, now); !slices.Equal(got, []int{2, 1}) {
		t.Errorf("got %v, want [2 1] (b before a by UID, c oldest)", got)
	}
	if got := PodsToDelete(pods, 2, time.Time{}); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("zero now: got %v, want [1 2] (exact: newest first)", got)
	}
}

// Pods Kubernetes finds equivalent come out by name, then input index, so the
// result does not depend on the input order beyond identical names.
func TestDeterministicTieBreak(t *testing.T) {
	mk := func(name string) Pod {
		return Pod{Name: name, Node: "n", Phase: PhaseRunning, Ready: true, Created: now.Add(-time.Minute)}
	}
	pods := []Pod{mk("c"), mk("a"), mk("b"), mk("a")}
	if got := PodsToDelete(pods, 3, now); !slices.Equal(got, []int{1, 3, 2}) {
		t.Errorf("got %v, want [1 3 2]", got)
	}
	for range 20 {
		if got := PodsToDelete(pods, 3, now); !slices.Equal(got, []int{1, 3, 2}) {
			t.Fatalf("unstable result %v", got)
		}
	}
}

// A full scale-down order across every rule, in the order of
// ActivePodsWithRanks' doc comment.
func TestFullOrder(t *testing.T) {
	created := now.Add(-24 * time.Hour)
	base := func(name string) Pod {
		return Pod{Name: name, UID: name, Node: "n1", Phase: PhaseRunning, Ready: true,
			ReadySince: now.Add(-20 * time.Hour), Created: created}
	}
	unassigned := base("1-unassigned")
	unassigned.Node, unassigned.Phase, unassigned.Ready = "", PhasePending, false
	pending := base("2-pending")
	pending.Phase, pending.Ready = PhasePending, false
	unknown := base("3-unknown")
	unknown.Phase, unknown.Ready = PhaseUnknown, false
	notReady := base("4-not-ready")
	notReady.Ready = false
	cheap := base("5-cost-minus-1")
	cheap.DeletionCost = -1
	doubled := base("6-doubled-up") // on n1 with the pods above
	readyRecently := base("7-ready-recently")
	readyRecently.Node, readyRecently.ReadySince = "n2", now.Add(-time.Minute)
	restarts := base("8-restarts")
	restarts.Node, restarts.Restarts = "n3", 3
	newer := base("9-newer")
	newer.Node, newer.Created = "n4", now.Add(-time.Hour)
	oldest := base("10-oldest")
	oldest.Node = "n5"
	want := []Pod{unassigned, pending, unknown, notReady, cheap, doubled, readyRecently, restarts, newer, oldest}
	pods := slices.Clone(want)
	slices.Reverse(pods)
	got := PodsToDelete(pods, len(pods)-1, now)
	if names(pods, got) != namesOf(want[:len(want)-1]) {
		t.Errorf("got %s\nwant %s", names(pods, got), namesOf(want[:len(want)-1]))
	}
}
