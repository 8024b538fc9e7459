// Package lifecycle is the simulator's pod lifecycle: a service pod waits Pending
// in the scheduler's queue until a node takes it, starts, passes its readiness
// probes, and on deletion runs its graceful termination (SIGTERM, an optional
// drain, SIGKILL) until its sandbox and IP are gone.
//
// It owns each pod's phase, conditions and timestamps, and the queue of pods no
// node could take yet, with kube-scheduler's backoff. Pods share the engine's IDs;
// the engine places them, runs their apps and carries out what follows from a
// change through Cluster.
package lifecycle

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"trafficlab/scenario"
	"trafficlab/sim"
)

// Phase is a pod's phase as the network sees it.
type Phase uint8

const (
	// Starting: created, not yet listening (scheduling, image pull, start).
	Starting Phase = iota
	// Running: the app listens and serves.
	Running
	// Draining: SIGTERM with drain: the listener is closed, requests in progress
	// finish and are answered with Connection: close.
	Draining
	// Exited: the process is gone; the pod's IP still exists, so the kernel answers a
	// SYN or a segment of a dead connection with a reset.
	Exited
	// Gone: the IP is released; packets to it get no answer.
	Gone
)

// Status is a pod's conditions and timestamps as the API server and its kubelet
// know them (its phase is apart, Phase, which the datapath reads per request).
// Others read it; only the lifecycle changes it.
type Status struct {
	Deleting   bool     // deletionTimestamp set
	Ready      bool     // the Ready condition
	ReadySince sim.Time // last transition of the Ready condition
	FirstReady sim.Time // -1 until first Ready
	Created    sim.Time
	Scheduled  sim.Time // bound to its node; later than Created if it waited Pending
	Started    sim.Time // the app started listening
	DeletedAt  sim.Time
	Ended      sim.Time // the process ended; -1 while it runs
	// ClosedAt is when the app closed its idle keep-alive connections (drain or
	// exit); a client learns of it one trip later. Valid once Phase ≥ Draining.
	ClosedAt sim.Time

	svc      int32
	probeOK  bool  // result of the last readiness probe
	probeRun int32 // results in a row equal to probeOK
}

// Pending is a service pod no node could take yet. It exists, counts as a replica
// and has its name; it waits in the scheduler's queue for room.
type Pending struct {
	Name     string
	UID      string
	Svc      int32
	Revision int32 // its ReplicaSet: the service's template revision when created
	RNG      *rand.Rand
	Created  sim.Time
	Reason   string // why the last attempt failed

	attempts int      // scheduling attempts so far
	tried    sim.Time // the last attempt
	moved    bool     // room freed since the last attempt
}

// Cluster is what the lifecycle asks of the engine, which places pods and runs
// their apps.
type Cluster interface {
	// Bind places pending pod pp on a node and sets up its sandbox, app and
	// sidecar there; it returns the pod's ID, or -1 and why no node could take it.
	Bind(pp *Pending) (id int32, reason string)
	// StartupDelay is how long pod id's container takes to listen, drawn from its
	// service's distribution.
	StartupDelay(id int32) sim.Time
	// Terminating: pod id's deletionTimestamp is set; its endpoint turns
	// terminating.
	Terminating(id int32)
	// ReadyChanged: pod id's Ready condition changed.
	ReadyChanged(id int32, ready bool)
	// Idle tells whether pod id's app has no request in progress or queued.
	Idle(id int32) bool
	// Exited: pod id's process ended; the requests it held fail.
	Exited(id int32)
	// Gone: pod id's sandbox and IP are gone, and the pod object with it.
	Gone(id int32)
}

// Pods is the lifecycle of every service pod of a run.
type Pods struct {
	k        *sim.Kernel
	cluster  Cluster
	seed     int64
	teardown sim.Time        // the pod network's teardown after the process ends
	specs    []*scenario.Pod // per service
	pods     []Status
	phases   []Phase // per pod
	// settled is true while the initial cluster is built: its pods run and are
	// Ready at once, as a settled Deployment's are.
	settled bool
	// pending are service pods waiting for a node, in the order they were queued;
	// retryAt is when the next of them is due after its backoff.
	pending []Pending
	retryAt sim.Time

	evSchedule, evStart, evProbe, evSigterm, evKill, evNetGone uint8
}

// New registers the lifecycle's event kinds with k. Pods created before Run are
// the settled initial cluster's.
func New(k *sim.Kernel, seed int64, teardown sim.Time, cluster Cluster) *Pods {
	l := &Pods{k: k, cluster: cluster, seed: seed, teardown: teardown, settled: true}
	l.evSchedule = k.Register(l.onSchedule)
	l.evStart = k.Register(l.onStart)
	l.evProbe = k.Register(l.onProbe)
	l.evSigterm = k.Register(l.onSigterm)
	l.evKill = k.Register(l.onKill)
	l.evNetGone = k.Register(l.onNetGone)
	return l
}

// AddService adds the pod template of the next service.
func (l *Pods) AddService(spec *scenario.Pod) { l.specs = append(l.specs, spec) }

// Run ends the initial cluster: pods created from now on start, and are probed,
// in their own time.
func (l *Pods) Run() { l.settled = false }

// Pod is pod id's status.
func (l *Pods) Pod(id int32) *Status { return &l.pods[id] }

// Phase is pod id's phase.
func (l *Pods) Phase(id int32) Phase { return l.phases[id] }

// Pending are the pods waiting for a node, in the order they were queued.
func (l *Pods) Pending() []Pending { return l.pending }

// Create adds pod name, of template revision rev, to service svc and has the
// scheduler place it. It returns the pod's ID, or -1 when no node could take it:
// the pod then waits Pending, last in Pending(), and reason says why.
func (l *Pods) Create(svc, rev int32, name string) (id int32, reason string) {
	pp := Pending{Name: name, Svc: svc, Revision: rev, RNG: sim.Stream(l.seed, "pod/"+name), Created: l.k.Now()}
	// metadata.uid is random, as the API server makes it, so that ties the ReplicaSet
	// controller breaks by UID fall by chance, reproducibly.
	pp.UID = fmt.Sprintf("%016x", pp.RNG.Uint64())
	if id, ok := l.bind(&pp); ok {
		return id, ""
	}
	l.pending = append(l.pending, pp)
	return -1, pp.Reason
}

// bind tries to place pod pp and, when a node takes it, starts it there. Pods of
// the initial cluster are running and ready at once, as a settled Deployment is.
func (l *Pods) bind(pp *Pending) (int32, bool) {
	now := l.k.Now()
	pp.attempts++
	pp.tried, pp.moved = now, false
	id, reason := l.cluster.Bind(pp)
	if id < 0 {
		pp.Reason = reason
		return -1, false
	}
	for int(id) >= len(l.pods) {
		l.pods = append(l.pods, Status{})
		l.phases = append(l.phases, Starting)
	}
	l.phases[id] = Starting
	l.pods[id] = Status{svc: pp.Svc, Created: pp.Created, Scheduled: now, Ended: -1, FirstReady: -1}
	if l.settled {
		l.listening(id)
		return id, true
	}
	l.k.After(l.cluster.StartupDelay(id), l.evStart, id, 0)
	return id, true
}

// Scheduling backoff of a pod that failed to schedule: 1 s doubling per attempt up
// to 10 s (kube-scheduler's podInitialBackoffSeconds and podMaxBackoffSeconds;
// pkg/scheduler/backend/queue backoff: calculateBackoffDuration).
const (
	initialBackoff = sim.Time(time.Second)
	maxBackoff     = 10 * sim.Time(time.Second)
)

func backoff(attempts int) sim.Time {
	d := initialBackoff
	for i := 1; i < attempts && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// RoomFreed: a pod left a node. kube-scheduler moves its unschedulable pods back to
// the queue on such an event (AssignedPodDelete), each tried again once its backoff
// from the last attempt is over.
func (l *Pods) RoomFreed() {
	for i := range l.pending {
		l.pending[i].moved = true
	}
	l.schedulePending()
}

// schedulePending tries the pending pods that may now fit and whose backoff is over,
// in the order they were queued (the scheduler's PrioritySort: equal priorities go
// by queue time); the others wait for their backoff, or for more room.
func (l *Pods) schedulePending() {
	now := l.k.Now()
	next := sim.Time(-1)
	kept := l.pending[:0]
	for _, pp := range l.pending {
		if pp.moved {
			if at := pp.tried + backoff(pp.attempts); at > now {
				if next < 0 || at < next {
					next = at
				}
			} else if _, ok := l.bind(&pp); ok {
				continue
			}
		}
		kept = append(kept, pp)
	}
	clear(l.pending[len(kept):])
	l.pending = kept
	if next >= 0 && (l.retryAt <= now || next < l.retryAt) {
		l.retryAt = next
		l.k.At(next, l.evSchedule, 0, 0)
	}
}

// onSchedule: a pending pod's backoff is over.
func (l *Pods) onSchedule(sim.Event) {
	if l.k.Now() == l.retryAt {
		l.schedulePending()
	}
}

// DeletePending deletes pending pod i: an unscheduled pod has nothing to stop, so
// it goes at once.
func (l *Pods) DeletePending(i int) {
	l.pending = slices.Delete(l.pending, i, i+1)
}
