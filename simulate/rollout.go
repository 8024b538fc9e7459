package simulate

import (
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"trafficlab/model/replicaset"
	"trafficlab/result"
	"trafficlab/sim"
)

// A Deployment's pods, pending ones included, as its ReplicaSets count them, and
// its rollouts as the Deployment controller runs them
// (pkg/controller/deployment: rolling.go, recreate.go, util/deployment_util.go).
// Each rollout is a new pod template revision; the pods of one revision are one
// ReplicaSet. The controller acts on every pod change at once.

// replica is an active pod of a Deployment: placed (pod ≥ 0) or pending (index in
// e.pending, pod -1).
type replica struct {
	pod     int32
	pending int
}

// replicas are service si's active pods of the revisions sel picks, placed ones
// first.
func (e *Engine) replicas(si int32, sel func(revision int32) bool) []replica {
	var out []replica
	for _, id := range e.services[si].pods {
		if p := &e.pods[id]; !p.deleting && sel(p.revision) {
			out = append(out, replica{pod: id, pending: -1})
		}
	}
	for i := range e.pending {
		if pp := &e.pending[i]; pp.svc == si && sel(pp.revision) {
			out = append(out, replica{pod: -1, pending: i})
		}
	}
	return out
}

func anyRevision(int32) bool { return true }

func (e *Engine) current(si int32) func(int32) bool {
	rev := e.services[si].revision
	return func(r int32) bool { return r == rev }
}

func (e *Engine) old(si int32) func(int32) bool {
	rev := e.services[si].revision
	return func(r int32) bool { return r != rev }
}

// available tells whether a replica counts as available: Ready for at least
// minReadySeconds and not terminating (deployment_util.go IsPodAvailable).
func (e *Engine) available(r replica) bool {
	if r.pod < 0 {
		return false
	}
	p := &e.pods[r.pod]
	return p.ready && !p.deleting && e.k.Now()-p.readySince >= e.minReady(p.svc)
}

// minReady is service si's minReadySeconds.
func (e *Engine) minReady(si int32) sim.Time {
	return sim.Time(e.services[si].spec.MinReadySeconds) * sim.Time(time.Second)
}

func (e *Engine) countAvailable(rs []replica) int {
	n := 0
	for _, r := range rs {
		if e.available(r) {
			n++
		}
	}
	return n
}

// deleteReplicas deletes n of rs, ranked as the ReplicaSet controller ranks them
// (replicaset.PodsToDelete; related are every active pod of the Deployment), and
// returns their names.
func (e *Engine) deleteReplicas(si int32, rs []replica, n int) []string {
	if n <= 0 {
		return nil
	}
	ranked := make([]replicaset.Pod, len(rs))
	for i, r := range rs {
		ranked[i] = e.rsPod(r)
	}
	var related []replicaset.Pod
	for _, r := range e.replicas(si, anyRevision) {
		related = append(related, e.rsPod(r))
	}
	var names []string
	var pending []int
	for _, i := range replicaset.PodsToDeleteWithRelated(ranked, related, n, (e.k.Now()).Clock()) {
		names = append(names, ranked[i].Name)
		if rs[i].pod >= 0 {
			e.deletePod(rs[i].pod)
		} else {
			pending = append(pending, rs[i].pending)
		}
	}
	// Last index first, so the others stay valid.
	slices.Sort(pending)
	for i := len(pending) - 1; i >= 0; i-- {
		e.deletePending(pending[i])
	}
	return names
}

// rsPod is what the ReplicaSet controller's ranking reads of a replica.
func (e *Engine) rsPod(r replica) replicaset.Pod {
	if r.pod < 0 {
		pp := &e.pending[r.pending]
		return replicaset.Pod{Name: pp.name, UID: pp.uid, Phase: replicaset.PhasePending, Created: pp.created.Clock()}
	}
	p := &e.pods[r.pod]
	rp := replicaset.Pod{
		Name: p.name, UID: p.uid, Node: e.nodes[p.node].name, Phase: replicaset.PhaseRunning,
		Ready: p.ready, Created: p.created.Clock(),
	}
	if p.phase == podStarting {
		rp.Phase = replicaset.PhasePending
	}
	if p.ready {
		rp.ReadySince = (p.readySince).Clock()
	}
	return rp
}

// createReplicas adds n pods of the current revision and returns their names.
func (e *Engine) createReplicas(si int32, n int) (created, unschedulable []string) {
	for range n {
		id, reason := e.createPod(si)
		if id < 0 {
			created = append(created, e.pending[len(e.pending)-1].name)
			unschedulable = append(unschedulable, reason)
			continue
		}
		created = append(created, e.pods[id].name)
	}
	return created, unschedulable
}

// scheduleRollouts queues service si's rollouts.
func (e *Engine) scheduleRollouts(si int32) {
	for _, r := range e.services[si].spec.Rollouts {
		if at := sim.Duration(r.At.Duration); at < e.end {
			e.k.At(at, e.evRollout, si, 1)
		}
	}
}

// onRollout: a rollout starts (Gen 1: a new template revision), or a pod of a
// rolling service changed (Gen 0): the Deployment controller syncs.
func (e *Engine) onRollout(ev sim.Event) {
	si := ev.Obj
	svc := &e.services[si]
	if ev.Gen == 1 {
		svc.revision++
		svc.rolling = true
		e.rollouts = append(e.rollouts, result.Rollout{Service: svc.name, StartS: e.k.Now().Seconds(), Strategy: string(svc.spec.Strategy.Type)})
		svc.rollout = len(e.rollouts) - 1
	}
	if svc.rolling {
		e.syncRollout(si)
	}
}

// rolloutChanged: a pod of service si became available, became unready or left;
// the controller syncs when the change has its effect (after minReadySeconds for
// a pod turning available).
func (e *Engine) rolloutChanged(si int32, after sim.Time) {
	if e.services[si].rolling {
		e.k.After(after, e.evRollout, si, 0)
	}
}

// syncRollout runs the Deployment controller over a rolling service until it
// has nothing more to do now: each pass takes one step, and the ReplicaSet it
// changed triggers the next pass at once.
func (e *Engine) syncRollout(si int32) {
	svc := &e.services[si]
	ro := &e.rollouts[svc.rollout]
	step := e.rollingUpdate
	if svc.spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		step = e.recreate
	}
	for {
		created, deleted, unsched := step(si)
		if len(created)+len(deleted) == 0 {
			break
		}
		ro.Created = append(ro.Created, created...)
		ro.Deleted = append(ro.Deleted, deleted...)
		ro.Unschedulable = append(ro.Unschedulable, unsched...)
	}
	newRS := e.replicas(si, e.current(si))
	if len(e.replicas(si, e.old(si))) == 0 && len(newRS) == svc.replicas && e.countAvailable(newRS) == svc.replicas {
		svc.rolling = false
		done := e.k.Now().Seconds()
		ro.DoneS = &done
	}
}

// rollingUpdate is one pass of rolling.go rolloutRolling: the new ReplicaSet grows
// while the total stays within replicas + maxSurge (reconcileNewReplicaSet,
// NewRSNewReplicas), and if it did not, old ones shrink while at least replicas −
// maxUnavailable stay available, their unavailable pods first
// (reconcileOldReplicaSets, cleanupUnhealthyReplicas,
// scaleDownOldReplicaSetsForRollingUpdate). Old ReplicaSets are shrunk as one: the
// oldest-first order between them is not modelled.
func (e *Engine) rollingUpdate(si int32) (created, deleted, unsched []string) {
	svc := &e.services[si]
	want := svc.replicas
	surge, unavailable := fenceposts(svc.spec.Strategy.RollingUpdate, want)
	newRS, oldRS := e.replicas(si, e.current(si)), e.replicas(si, e.old(si))
	if total := len(newRS) + len(oldRS); total < want+surge && len(newRS) < want {
		created, unsched = e.createReplicas(si, min(want+surge-total, want-len(newRS)))
		return created, nil, unsched
	}
	if len(oldRS) == 0 {
		return nil, nil, nil
	}
	minAvailable := want - unavailable
	newAvailable, oldAvailable := e.countAvailable(newRS), e.countAvailable(oldRS)
	maxScaledDown := len(newRS) + len(oldRS) - minAvailable - (len(newRS) - newAvailable)
	if maxScaledDown <= 0 {
		return nil, nil, nil
	}
	cleanup := min(maxScaledDown, len(oldRS)-oldAvailable)
	scaleDown := max(0, newAvailable+oldAvailable-minAvailable)
	return nil, e.deleteReplicas(si, oldRS, min(len(oldRS), cleanup+scaleDown)), nil
}

// recreate is one pass of recreate.go rolloutRecreate: every old pod is deleted,
// and the new ones are created only when none of the old is left, terminating ones
// included.
func (e *Engine) recreate(si int32) (created, deleted, unsched []string) {
	if oldRS := e.replicas(si, e.old(si)); len(oldRS) > 0 {
		return nil, e.deleteReplicas(si, oldRS, len(oldRS)), nil
	}
	svc := &e.services[si]
	for _, id := range svc.pods {
		if e.pods[id].revision != svc.revision {
			return nil, nil, nil // still terminating
		}
	}
	if n := svc.replicas - len(e.replicas(si, e.current(si))); n > 0 {
		created, unsched = e.createReplicas(si, n)
	}
	return created, nil, unsched
}

// fenceposts is deployment_util.go ResolveFenceposts: maxSurge rounds up,
// maxUnavailable down, and both 0 would stall, so unavailable becomes 1.
// The values were validated, so they scale without error.
func fenceposts(ru *appsv1.RollingUpdateDeployment, replicas int) (surge, unavailable int) {
	surge, _ = intstr.GetScaledValueFromIntOrPercent(ru.MaxSurge, replicas, true)
	unavailable, _ = intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, replicas, false)
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, unavailable
}

// registerRollouts registers the event kinds of rollout events with the kernel.
func (e *Engine) registerRollouts() {
	e.evRollout = e.k.Register(e.onRollout)
}
