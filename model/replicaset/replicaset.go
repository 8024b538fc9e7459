// Package replicaset models which pods a ReplicaSet controller deletes when it
// scales down.
//
// It mirrors kubernetes/kubernetes:
//   - pkg/controller/replicaset/replica_set.go: manageReplicas (diff > 0),
//     getPodsToDelete and getPodsRankedByRelatedPodsOnSameNode;
//   - pkg/controller/controller_utils.go: ActivePodsWithRanks.Less,
//     afterOrZero, logarithmicRankDiff, podReadyTime, maxContainerRestarts,
//     FilterActivePods / IsPodActive.
//
// Feature gates are taken at their defaults: PodDeletionCost (beta, on) and
// LogarithmicScaleDown (GA since v1.31, always on).
package replicaset

import (
	"math"
	"slices"
	"strings"
	"time"
)

// Phase is a pod phase. The values are those of k8s.io/api/core/v1.PodPhase,
// so Phase(pod.Status.Phase) converts.
type Phase string

// Pod phases (core/v1 PodPhase values).
const (
	PhasePending   Phase = "Pending"
	PhaseRunning   Phase = "Running"
	PhaseSucceeded Phase = "Succeeded"
	PhaseFailed    Phase = "Failed"
	PhaseUnknown   Phase = "Unknown"
)

// phaseOrdinal mirrors controller_utils.go podPhaseToOrdinal
// (Pending 0 < Unknown 1 < Running 2). Phases missing from the map read as 0
// there, as here; they only occur for inactive pods, which are filtered out.
func phaseOrdinal(p Phase) int {
	switch p {
	case PhaseUnknown:
		return 1
	case PhaseRunning:
		return 2
	}
	return 0
}

// Pod is what the ranking reads of a pod.
type Pod struct {
	Name string
	// UID breaks ties between pods in the same logarithmic time bucket, as
	// Kubernetes does (s.Pods[i].UID < s.Pods[j].UID). May be empty: two
	// empty UIDs are equal, as in the Kubernetes tests.
	UID string
	// Node is spec.nodeName; "" means not yet scheduled.
	Node  string
	Phase Phase
	// Ready is the PodReady condition (podutil.IsPodReady).
	Ready bool
	// ReadySince is the PodReady=True condition's lastTransitionTime; it is
	// only read when Ready. Zero means unknown (ranked as the newest).
	ReadySince time.Time
	// Created is metadata.creationTimestamp; zero ranks as the newest.
	Created time.Time
	// Restarts is the highest restartCount over the pod's containers
	// (maxContainerRestarts).
	Restarts int32
	// DeletionCost is the controller.kubernetes.io/pod-deletion-cost
	// annotation (0 when unset or invalid).
	DeletionCost int32
	// Terminating means metadata.deletionTimestamp is set.
	Terminating bool
}

// IsActive mirrors controller_utils.go IsPodActive: not Succeeded, not
// Failed, no deletionTimestamp. Only active pods count as replicas
// (syncReplicaSet: FilterActivePods), so only they are chosen and ranked.
func IsActive(p Pod) bool {
	return p.Phase != PhaseSucceeded && p.Phase != PhaseFailed && !p.Terminating
}

// PodsToDelete returns the indexes into pods of the n pods the ReplicaSet
// controller deletes first when it scales down by n, most preferred first.
// The related pods used for the same-node rank are pods themselves; see
// PodsToDeleteWithRelated. (manageReplicas also caps one sync's deletions at
// burstReplicas, 500; that cap is the caller's.)
func PodsToDelete(pods []Pod, n int, now time.Time) []int {
	return PodsToDeleteWithRelated(pods, nil, n, now)
}

// PodsToDeleteWithRelated is PodsToDelete with an explicit set of related
// pods: in Kubernetes (getIndirectlyRelatedPods) these are the pods of every
// ReplicaSet owned by the same controller (e.g. all of a Deployment's
// ReplicaSets, this one included). related == nil means pods.
//
// As in replica_set.go, inactive pods (IsActive false) are never returned;
// n is capped at the number of active pods; when n covers all of them they
// are returned in input order without sorting (getPodsToDelete:
// "No need to sort pods if we are about to delete all of them").
//
// Otherwise the active pods are sorted by Less, where Kubernetes' sort.Sort
// would leave equivalent pods in an arbitrary order; here they are ordered by
// Name, then by index, with a stable sort, so the result is deterministic.
// now is ActivePodsWithRanks.Now: zero disables the logarithmic buckets.
func PodsToDeleteWithRelated(pods, related []Pod, n int, now time.Time) []int {
	if related == nil {
		related = pods
	}
	active := make([]int, 0, len(pods))
	for i, p := range pods {
		if IsActive(p) {
			active = append(active, i)
		}
	}
	if n <= 0 {
		return []int{}
	}
	if n >= len(active) {
		return active
	}
	ranks := Ranks(pods, related)
	slices.SortStableFunc(active, func(i, j int) int {
		switch {
		case Less(pods[i], pods[j], ranks[i], ranks[j], now):
			return -1
		case Less(pods[j], pods[i], ranks[j], ranks[i], now):
			return 1
		}
		return strings.Compare(pods[i].Name, pods[j].Name)
	})
	return active[:n]
}

// Ranks mirrors replica_set.go getPodsRankedByRelatedPodsOnSameNode: the rank
// of pods[i] is the number of active pods in related on the same node
// (unscheduled pods share the node "").
func Ranks(pods, related []Pod) []int {
	onNode := make(map[string]int)
	for _, p := range related {
		if IsActive(p) {
			onNode[p.Node]++
		}
	}
	ranks := make([]int, len(pods))
	for i, p := range pods {
		ranks[i] = onNode[p.Node]
	}
	return ranks
}

// Less mirrors controller_utils.go ActivePodsWithRanks.Less: it reports
// whether a (with rank ra) is preferred for deletion over b (rank rb).
// Rules, the first that differs decides:
//  1. unassigned < assigned;
//  2. Pending < Unknown < Running;
//  3. not ready < ready;
//  4. lower pod-deletion-cost < higher;
//  5. higher rank (more related pods on the same node) < lower;
//  6. both ready: ready for less time < more (log2 buckets, then UID);
//  7. more restarts < fewer;
//  8. newer creation < older (log2 buckets, then UID).
//
// In 6 and 8, two different times in the same bucket compare by UID and the
// later rules are not reached, exactly as in Kubernetes.
func Less(a, b Pod, ra, rb int, now time.Time) bool {
	// 1. Unassigned < assigned.
	if a.Node != b.Node && (a.Node == "" || b.Node == "") {
		return a.Node == ""
	}
	// 2. PodPending < PodUnknown < PodRunning.
	if oa, ob := phaseOrdinal(a.Phase), phaseOrdinal(b.Phase); oa != ob {
		return oa < ob
	}
	// 3. Not ready < ready.
	if a.Ready != b.Ready {
		return !a.Ready
	}
	// 4. Lower pod-deletion-cost < higher pod-deletion-cost.
	if a.DeletionCost != b.DeletionCost {
		return a.DeletionCost < b.DeletionCost
	}
	// 5. Doubled up < not doubled up.
	if ra != rb {
		return ra > rb
	}
	// 6. Been ready for empty time < less time < more time.
	if a.Ready && b.Ready && !a.ReadySince.Equal(b.ReadySince) {
		return newerFirst(a.ReadySince, b.ReadySince, a.UID, b.UID, now)
	}
	// 7. Higher restart counts < lower restart counts.
	if a.Restarts != b.Restarts {
		return a.Restarts > b.Restarts
	}
	// 8. Empty creation time < newer < older.
	if !a.Created.Equal(b.Created) {
		return newerFirst(a.Created, b.Created, a.UID, b.UID, now)
	}
	return false
}

// newerFirst compares two different timestamps the way rules 6 and 8 do with
// LogarithmicScaleDown on: exactly (afterOrZero) if now or either time is
// zero, else by log2 bucket of the age, the same bucket falling to the UIDs.
func newerFirst(t1, t2 time.Time, uid1, uid2 string, now time.Time) bool {
	if now.IsZero() || t1.IsZero() || t2.IsZero() {
		return afterOrZero(t1, t2)
	}
	if d := logarithmicRankDiff(t1, t2, now); d != 0 {
		return d < 0
	}
	return uid1 < uid2
}

// afterOrZero mirrors controller_utils.go afterOrZero: t1 is after t2, a zero
// time counting as after any non-zero one.
func afterOrZero(t1, t2 time.Time) bool {
	if t1.IsZero() || t2.IsZero() {
		return t1.IsZero()
	}
	return t1.After(t2)
}

// logarithmicRankDiff mirrors controller_utils.go logarithmicRankDiff:
// floor(log2(age in ns)) of each timestamp relative to now (-1 if not in the
// past), subtracted.
func logarithmicRankDiff(t1, t2, now time.Time) int64 {
	return logRank(now.Sub(t1)) - logRank(now.Sub(t2))
}

func logRank(d time.Duration) int64 {
	if d <= 0 {
		return -1
	}
	return int64(math.Log2(float64(d)))
}
