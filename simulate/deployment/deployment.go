// Package deployment is the simulator's Deployment subsystem: each service's
// Deployment with its spec.replicas, its pod template revisions (one ReplicaSet
// each) and its rollouts, as the Deployment and ReplicaSet controllers run them
// (pkg/controller/deployment: rolling.go, recreate.go, util/deployment_util.go;
// pkg/controller/replicaset). It owns the replica counts, the revisions, the
// rollouts and the scale events; it sees and changes the pods through Pods, as the
// controllers do through the API server. The controllers act on every pod change
// at once.
package deployment

import (
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"trafficlab/model/replicaset"
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// Replica is an active pod of a Deployment, as the controllers read it: placed on
// a node (Pod ≥ 0) or Pending (Pod -1, with its index among the pending pods).
type Replica struct {
	Pod      int32
	Pending  int
	Revision int32
	Name     string
	UID      string
	Node     string // "" while Pending
	Starting bool   // placed, its app not yet running
	Ready    bool
	// ReadySince is the last transition of the Ready condition.
	ReadySince, Created sim.Time
}

// Pods is what the controllers see of a service's pods and do to them.
type Pods interface {
	// Active appends the service's pods that are not terminating, then its Pending
	// ones, to into.
	Active(svc int32, into []Replica) []Replica
	// Terminating tells whether a pod of the service of another revision than rev
	// has yet to go.
	Terminating(svc, rev int32) bool
	// Create makes a pod of the service at revision rev, and returns its name and,
	// when no node could take it, why.
	Create(svc, rev int32) (name string, placed bool, reason string)
	// Delete deletes a placed pod; DeletePending a Pending one, by its index.
	Delete(pod int32)
	DeletePending(i int)
}

// service is one Deployment.
type service struct {
	spec     *scenario.Service
	replicas int // spec.replicas
	// revision is the pod template's: a rollout makes a new one, whose pods form
	// the Deployment's new ReplicaSet. rolling is set while a rollout is under way.
	revision int32
	rolling  bool
	rollout  int // its rollout in progress, in rollouts
}

// Controllers are the Deployment controllers of a run.
type Controllers struct {
	k           *sim.Kernel
	pods        Pods
	services    []service
	rollouts    []result.Rollout
	scaleEvents []result.ScaleEvent
	scratch     []Replica
	evRollout   uint8
}

// New registers the controllers' event with k.
func New(k *sim.Kernel, pods Pods) *Controllers {
	c := &Controllers{k: k, pods: pods}
	c.evRollout = k.Register(c.onRollout)
	return c
}

// Add adds the next service's Deployment, with its initial spec.replicas; the
// caller creates its pods.
func (c *Controllers) Add(s *scenario.Service) {
	c.services = append(c.services, service{spec: s, replicas: s.Replicas})
}

// QueueRollouts queues service si's rollouts within a run of length end.
func (c *Controllers) QueueRollouts(si int32, end sim.Time) {
	for _, r := range c.services[si].spec.Rollouts {
		if at := sim.Duration(r.At.Duration); at < end {
			c.k.At(at, c.evRollout, si, 1)
		}
	}
}

// Replicas is service svc's spec.replicas.
func (c *Controllers) Replicas(svc int32) int { return c.services[svc].replicas }

// Revision is service svc's current pod template revision.
func (c *Controllers) Revision(svc int32) int32 { return c.services[svc].revision }

// Active is how many pods of service svc are not terminating, Pending ones included.
func (c *Controllers) Active(svc int32) int {
	c.scratch = c.pods.Active(svc, c.scratch[:0])
	return len(c.scratch)
}

// ScaleEvents are the scale events so far; Rollouts the rollouts.
func (c *Controllers) ScaleEvents() []result.ScaleEvent { return c.scaleEvents }
func (c *Controllers) Rollouts() []result.Rollout       { return c.rollouts }

// replicas are service si's active pods of the revisions sel picks, placed ones
// first.
func (c *Controllers) replicas(si int32, sel func(revision int32) bool) []Replica {
	c.scratch = c.pods.Active(si, c.scratch[:0])
	var out []Replica
	for _, r := range c.scratch {
		if sel(r.Revision) {
			out = append(out, r)
		}
	}
	return out
}

func anyRevision(int32) bool { return true }

func (c *Controllers) current(si int32) func(int32) bool {
	rev := c.services[si].revision
	return func(r int32) bool { return r == rev }
}

func (c *Controllers) old(si int32) func(int32) bool {
	rev := c.services[si].revision
	return func(r int32) bool { return r != rev }
}

// available tells whether a replica counts as available: Ready for at least
// minReadySeconds and not terminating (deployment_util.go IsPodAvailable).
func (c *Controllers) available(si int32, r *Replica) bool {
	return r.Pod >= 0 && r.Ready && c.k.Now()-r.ReadySince >= c.MinReady(si)
}

// MinReady is service si's minReadySeconds.
func (c *Controllers) MinReady(si int32) sim.Time {
	return sim.Time(c.services[si].spec.MinReadySeconds) * sim.Time(time.Second)
}

func (c *Controllers) countAvailable(si int32, rs []Replica) int {
	n := 0
	for i := range rs {
		if c.available(si, &rs[i]) {
			n++
		}
	}
	return n
}

// deleteReplicas deletes n of rs, ranked as the ReplicaSet controller ranks them
// (replicaset.PodsToDelete; related are every active pod of the Deployment), and
// returns their names.
func (c *Controllers) deleteReplicas(si int32, rs []Replica, n int) []string {
	if n <= 0 {
		return nil
	}
	ranked := make([]replicaset.Pod, len(rs))
	for i := range rs {
		ranked[i] = rsPod(&rs[i])
	}
	var related []replicaset.Pod
	for _, r := range c.replicas(si, anyRevision) {
		related = append(related, rsPod(&r))
	}
	var names []string
	var pending []int
	for _, i := range replicaset.PodsToDeleteWithRelated(ranked, related, n, c.k.Now().Clock()) {
		names = append(names, ranked[i].Name)
		if rs[i].Pod >= 0 {
			c.pods.Delete(rs[i].Pod)
		} else {
			pending = append(pending, rs[i].Pending)
		}
	}
	// Last index first, so the others stay valid.
	slices.Sort(pending)
	for i := len(pending) - 1; i >= 0; i-- {
		c.pods.DeletePending(pending[i])
	}
	return names
}

// rsPod is what the ReplicaSet controller's ranking reads of a replica.
func rsPod(r *Replica) replicaset.Pod {
	if r.Pod < 0 {
		return replicaset.Pod{Name: r.Name, UID: r.UID, Phase: replicaset.PhasePending, Created: r.Created.Clock()}
	}
	rp := replicaset.Pod{
		Name: r.Name, UID: r.UID, Node: r.Node, Phase: replicaset.PhaseRunning,
		Ready: r.Ready, Created: r.Created.Clock(),
	}
	if r.Starting {
		rp.Phase = replicaset.PhasePending
	}
	if r.Ready {
		rp.ReadySince = r.ReadySince.Clock()
	}
	return rp
}

// createReplicas adds n pods of the current revision and returns their names.
func (c *Controllers) createReplicas(si int32, n int) (created, unschedulable []string) {
	for range n {
		name, placed, reason := c.pods.Create(si, c.services[si].revision)
		created = append(created, name)
		if !placed {
			unschedulable = append(unschedulable, reason)
		}
	}
	return created, unschedulable
}

// Scale sets service si's Deployment to n replicas: the ReplicaSet controller
// creates pods, or deletes the ones it ranks first (replicaset.PodsToDelete).
// During a rollout, old ReplicaSets give up pods first and the rollout creates
// the new ones: Kubernetes' proportional scaling across ReplicaSets
// (sync.go scale) is not modelled.
func (c *Controllers) Scale(si int32, n int, reason string) {
	svc := &c.services[si]
	ev := result.ScaleEvent{TS: c.k.Now().Seconds(), Service: svc.spec.Name, From: svc.replicas, To: n, Reason: reason}
	svc.replicas = n
	active := len(c.replicas(si, anyRevision))
	switch {
	case n < active:
		oldRS := c.replicas(si, c.old(si))
		ev.Deleted = c.deleteReplicas(si, oldRS, min(active-n, len(oldRS)))
		ev.Deleted = append(ev.Deleted, c.deleteReplicas(si, c.replicas(si, c.current(si)), active-n-len(ev.Deleted))...)
	case svc.rolling:
		c.syncRollout(si)
	default:
		ev.Created, ev.Unschedulable = c.createReplicas(si, n-active)
	}
	c.scaleEvents = append(c.scaleEvents, ev)
}

// onRollout: a rollout starts (Gen 1: a new template revision), or a pod of a
// rolling service changed (Gen 0): the Deployment controller syncs.
func (c *Controllers) onRollout(ev sim.Event) {
	si := ev.Obj
	svc := &c.services[si]
	if ev.Gen == 1 {
		svc.revision++
		svc.rolling = true
		c.rollouts = append(c.rollouts, result.Rollout{Service: svc.spec.Name, StartS: c.k.Now().Seconds(), Strategy: string(svc.spec.Strategy.Type)})
		svc.rollout = len(c.rollouts) - 1
	}
	if svc.rolling {
		c.syncRollout(si)
	}
}

// Changed: a pod of service si became available, became unready or left; the
// controller syncs when the change has its effect (after minReadySeconds for a pod
// turning available).
func (c *Controllers) Changed(si int32, after sim.Time) {
	if c.services[si].rolling {
		c.k.After(after, c.evRollout, si, 0)
	}
}

// syncRollout runs the Deployment controller over a rolling service until it
// has nothing more to do now: each pass takes one step, and the ReplicaSet it
// changed triggers the next pass at once.
func (c *Controllers) syncRollout(si int32) {
	svc := &c.services[si]
	ro := &c.rollouts[svc.rollout]
	step := c.rollingUpdate
	if svc.spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		step = c.recreate
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
	newRS := c.replicas(si, c.current(si))
	if len(c.replicas(si, c.old(si))) == 0 && len(newRS) == svc.replicas && c.countAvailable(si, newRS) == svc.replicas {
		svc.rolling = false
		done := c.k.Now().Seconds()
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
func (c *Controllers) rollingUpdate(si int32) (created, deleted, unsched []string) {
	svc := &c.services[si]
	want := svc.replicas
	surge, unavailable := fenceposts(svc.spec.Strategy.RollingUpdate, want)
	newRS, oldRS := c.replicas(si, c.current(si)), c.replicas(si, c.old(si))
	if total := len(newRS) + len(oldRS); total < want+surge && len(newRS) < want {
		created, unsched = c.createReplicas(si, min(want+surge-total, want-len(newRS)))
		return created, nil, unsched
	}
	if len(oldRS) == 0 {
		return nil, nil, nil
	}
	minAvailable := want - unavailable
	newAvailable, oldAvailable := c.countAvailable(si, newRS), c.countAvailable(si, oldRS)
	maxScaledDown := len(newRS) + len(oldRS) - minAvailable - (len(newRS) - newAvailable)
	if maxScaledDown <= 0 {
		return nil, nil, nil
	}
	cleanup := min(maxScaledDown, len(oldRS)-oldAvailable)
	scaleDown := max(0, newAvailable+oldAvailable-minAvailable)
	return nil, c.deleteReplicas(si, oldRS, min(len(oldRS), cleanup+scaleDown)), nil
}

// recreate is one pass of recreate.go rolloutRecreate: every old pod is deleted,
// and the new ones are created only when none of the old is left, terminating ones
// included.
func (c *Controllers) recreate(si int32) (created, deleted, unsched []string) {
	if oldRS := c.replicas(si, c.old(si)); len(oldRS) > 0 {
		return nil, c.deleteReplicas(si, oldRS, len(oldRS)), nil
	}
	svc := &c.services[si]
	if c.pods.Terminating(si, svc.revision) {
		return nil, nil, nil
	}
	if n := svc.replicas - len(c.replicas(si, c.current(si))); n > 0 {
		created, unsched = c.createReplicas(si, n)
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
