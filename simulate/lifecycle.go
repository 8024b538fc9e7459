package simulate

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"trafficlab/model/kubelet"
	"trafficlab/placement"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// Pod phases as the network sees them.
const (
	// podStarting: created, not yet listening (scheduling, image pull, start).
	podStarting uint8 = iota
	// podRunning: the app listens and serves.
	podRunning
	// podDraining: SIGTERM with drain: the listener is closed, requests in progress
	// finish and are answered with Connection: close.
	podDraining
	// podExited: the process is gone; the pod's IP still exists, so the kernel answers
	// a SYN or a segment of a dead connection with a reset.
	podExited
	// podGone: the IP is released; packets to it get no answer.
	podGone
)

// pendingPod is a service pod no node could take yet. It exists, counts as a
// replica and has its name; it waits in the scheduler's queue for room.
type pendingPod struct {
	name     string
	uid      string
	svc      int32
	revision int32 // its ReplicaSet: the service's template revision when created
	rng      *rand.Rand
	created  sim.Time
	reason   string   // why the last attempt failed
	attempts int      // scheduling attempts so far
	tried    sim.Time // the last attempt
	moved    bool     // room freed since the last attempt
}

// createPod adds a replica of template revision rev to service si and has the
// scheduler place it. It returns the pod's id, or -1 when no node could take it:
// the pod then waits Pending (schedulePending) and reason says why.
func (e *Engine) createPod(si, rev int32) (id int32, reason string) {
	svc := &e.services[si]
	name := fmt.Sprintf("%s-%d", svc.name, svc.created)
	svc.created++
	pp := pendingPod{name: name, svc: si, revision: rev, rng: sim.Stream(e.sc.Spec.Seed, "pod/"+name), created: e.k.Now()}
	// metadata.uid is random, as the API server makes it, so that ties the ReplicaSet
	// controller breaks by UID fall by chance, reproducibly.
	pp.uid = fmt.Sprintf("%016x", pp.rng.Uint64())
	if id, ok := e.bind(&pp); ok {
		return id, ""
	}
	e.pending = append(e.pending, pp)
	return -1, pp.reason
}

// bind tries to place pod pp and, when a node takes it, starts it there. Pods of
// the initial cluster are running and ready at once, as a settled Deployment is.
func (e *Engine) bind(pp *pendingPod) (int32, bool) {
	now := e.k.Now()
	pp.attempts++
	pp.tried, pp.moved = now, false
	node, err := e.sched.Schedule(placement.ServicePod(e.services[pp.svc].spec, pp.name))
	if err != nil {
		pp.reason = placement.Unschedulable(pp.name, err).Error()
		return -1, false
	}
	si := pp.svc
	svc := &e.services[si]
	id := int32(len(e.pods))
	n := int32(node)
	p := pod{
		name: pp.name, uid: pp.uid, svc: si, revision: pp.revision, node: n, concurrency: svc.spec.Pod.Concurrency,
		work: svc.work, wait: svc.wait, acceptCost: int64(svc.spec.Pod.AcceptCost.Duration),
		rng: pp.rng, created: pp.created, scheduled: now, ended: -1, firstReady: -1,
	}
	p.envoy = -1
	p.logCPU = int64(svc.logCPU)
	p.grp = e.nodes[n].cpu.AddGroup(id, svc.weight, e.limitQuota(svc.limit, "pod/"+pp.name))
	e.nodes[n].pods++
	e.pods = append(e.pods, p)
	svc.pods = append(svc.pods, id)
	e.openLog(id)
	if svc.spec.Sidecar != nil {
		e.pods[id].envoy = e.mesh.Add(svc.spec.Sidecar, true, id, n, si, pp.name)
	}
	if !e.started {
		e.podListening(id)
		return id, true
	}
	e.k.After(sim.Time(svc.startup.Sample(e.pods[id].rng)), e.evPodStart, id, 0)
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

// roomFreed: a pod left a node. kube-scheduler moves its unschedulable pods back to
// the queue on such an event (AssignedPodDelete), each tried again once its backoff
// from the last attempt is over.
func (e *Engine) roomFreed() {
	for i := range e.pending {
		e.pending[i].moved = true
	}
	e.schedulePending()
}

// schedulePending tries the pending pods that may now fit and whose backoff is over,
// in the order they were queued (the scheduler's PrioritySort: equal priorities go
// by queue time); the others wait for their backoff, or for more room.
func (e *Engine) schedulePending() {
	now := e.k.Now()
	next := sim.Time(-1)
	kept := e.pending[:0]
	for _, pp := range e.pending {
		if pp.moved {
			if at := pp.tried + backoff(pp.attempts); at > now {
				if next < 0 || at < next {
					next = at
				}
			} else if _, ok := e.bind(&pp); ok {
				continue
			}
		}
		kept = append(kept, pp)
	}
	clear(e.pending[len(kept):])
	e.pending = kept
	if next >= 0 && (e.retryAt <= now || next < e.retryAt) {
		e.retryAt = next
		e.k.At(next, e.evSchedule, 0, 0)
	}
}

// onSchedule: a pending pod's backoff is over.
func (e *Engine) onSchedule(ev sim.Event) {
	if e.k.Now() == e.retryAt {
		e.schedulePending()
	}
}

// deletePending deletes pending pod i: an unscheduled pod has nothing to stop, so
// it goes at once.
func (e *Engine) deletePending(i int) {
	e.pending = slices.Delete(e.pending, i, i+1)
}

// onPodStart: the container is up and the app listens.
func (e *Engine) onPodStart(ev sim.Event) {
	if e.pods[ev.Obj].phase == podStarting {
		e.podListening(ev.Obj)
	}
}

func (e *Engine) podListening(id int32) {
	p := &e.pods[id]
	p.phase = podRunning
	p.started = e.k.Now()
	probe := e.services[p.svc].spec.Pod.ReadinessProbe
	if probe == nil || !e.started {
		// No readiness probe: Ready as soon as the container runs. A pod of the
		// settled initial cluster has passed its probes long ago.
		e.setReady(id, true)
		if probe != nil {
			p.probeOK, p.probeRun = true, *probe.SuccessThreshold
			e.k.After(sim.Time(*probe.PeriodSeconds)*sim.Time(time.Second), e.evProbe, id, 0)
		}
		return
	}
	// The prober worker probes at once and then every period, skipping results until
	// initialDelaySeconds have passed since the container started
	// (pkg/kubelet/prober/worker.go run and doProbe).
	e.k.After(0, e.evProbe, id, 0)
}

// onProbe runs one readiness probe. It succeeds while the app listens: a draining app
// has closed its listener, an exited one has none. Readiness starts as a failure, and
// the condition flips after successThreshold or failureThreshold results in a row
// (worker.go doProbe resultRun).
func (e *Engine) onProbe(ev sim.Event) {
	id := ev.Obj
	p := &e.pods[id]
	if p.phase >= podExited {
		return // the container is gone: no more probes
	}
	probe := e.services[p.svc].spec.Pod.ReadinessProbe
	period := sim.Time(*probe.PeriodSeconds) * sim.Time(time.Second)
	e.k.After(period, e.evProbe, id, 0)
	if e.k.Now()-p.started < sim.Time(probe.InitialDelaySeconds)*sim.Time(time.Second) {
		return
	}
	ok := p.phase == podRunning
	if ok != p.probeOK {
		p.probeOK, p.probeRun = ok, 0
	}
	p.probeRun++
	threshold := *probe.FailureThreshold
	if ok {
		threshold = *probe.SuccessThreshold
	}
	if p.probeRun >= threshold && ok != p.ready {
		e.setReady(id, ok)
	}
}

// setReady changes the pod's Ready condition, and so its endpoint.
func (e *Engine) setReady(id int32, ready bool) {
	p := &e.pods[id]
	p.ready = ready
	p.readySince = e.k.Now()
	if ready && p.firstReady < 0 {
		p.firstReady = p.readySince
	}
	e.routing.Changed(p.svc)
	if ready {
		e.deployments.Changed(p.svc, e.deployments.MinReady(p.svc))
	}
}

// deletePod starts a pod's graceful termination, as the API server and kubelet run it:
// the deletionTimestamp turns its endpoint terminating (not ready) while, in parallel,
// the kubelet runs preStop, then sends SIGTERM, and SIGKILL at the end of the grace
// period (kuberuntime_container.go killContainer: the hook's time is taken from the
// grace period, but the app always gets at least 2 s after SIGTERM: kubelet.Termination).
func (e *Engine) deletePod(id int32) {
	p := &e.pods[id]
	if p.deleting {
		return
	}
	p.deleting = true
	p.deletedAt = e.k.Now()
	e.routing.Changed(p.svc)
	if p.phase == podStarting {
		e.exit(id)
		return
	}
	sigterm, sigkill := kubelet.Termination(e.services[p.svc].spec.Pod.TerminationSpec())
	e.k.After(sim.Duration(sigterm), e.evSigterm, id, 0)
	e.k.After(sim.Duration(sigkill), e.evKill, id, 0)
}

// onSigterm: the app either exits at once or drains.
func (e *Engine) onSigterm(ev sim.Event) {
	id := ev.Obj
	p := &e.pods[id]
	if p.phase != podRunning {
		return
	}
	on := &e.services[p.svc].spec.Pod.OnSigterm
	if on.Action != scenario.SigtermDrain {
		e.exit(id)
		return
	}
	// Drain as Go's http.Server.Shutdown does: close the listener, close idle
	// keep-alive connections, let requests in progress finish.
	p.phase = podDraining
	p.closedAt = e.k.Now()
	if on.DrainTimeout != nil {
		e.k.After(sim.Duration(on.DrainTimeout.Duration), e.evKill, id, 0)
	}
	e.drained(id)
}

// drained ends a draining pod's process once nothing is left in progress.
func (e *Engine) drained(id int32) {
	p := &e.pods[id]
	if p.phase == podDraining && p.busy == 0 && p.queue.Len() == 0 {
		e.exit(id)
	}
}

// onKill: SIGKILL at the end of the grace period, or the app's own drain timeout.
func (e *Engine) onKill(ev sim.Event) {
	if p := &e.pods[ev.Obj]; p.phase == podRunning || p.phase == podDraining {
		e.exit(ev.Obj)
	}
}

// exit ends the pod's process. The kernel closes its sockets: a connection whose
// request the app had read gets a FIN (the client reads EOF before any answer); one
// whose request was still unread in the socket gets a reset. The pod is no longer
// Ready; its IP goes when the sandbox is torn down.
func (e *Engine) exit(id int32) {
	p := &e.pods[id]
	now := e.k.Now()
	wasStarting := p.phase == podStarting
	p.phase = podExited
	p.ended = now
	if p.closedAt == 0 {
		p.closedAt = now
	}
	back := e.hop + e.relay
	e.done = p.grp.Abort(now, e.done[:0])
	for _, ji := range e.done {
		e.connFailed(ji, errClosed, back)
		e.freeJob(ji)
	}
	for ji, ok := p.queue.Pop(); ok; ji, ok = p.queue.Pop() {
		e.connFailed(ji, errReset, back)
		e.freeJob(ji)
	}
	// Requests blocked writing their log line die with the process; the line never
	// reaches the pipe.
	e.resumed = e.logs.Drop(id, e.resumed[:0])
	for _, ji := range e.resumed {
		e.connFailed(ji, errClosed, back)
		e.freeJob(ji)
	}
	// Requests waiting off-CPU: their pending wait events find the job dead.
	for ji := range e.jobs {
		j := &e.jobs[ji]
		if j.pod == id && j.state == jobWaiting {
			j.state = jobDead
			e.connFailed(int32(ji), errClosed, back)
		}
	}
	p.busy = 0
	if p.envoy >= 0 {
		// The sidecar ends with the pod: the kernel closes the connections of the
		// requests it held.
		e.done = e.mesh.Stop(p.envoy, e.done[:0])
		for _, ji := range e.done {
			e.connFailed(ji, errClosed, back)
			e.freeJob(ji)
		}
	}
	if p.ready {
		e.setReady(id, false)
	}
	if wasStarting {
		e.k.After(0, e.evNetGone, id, 0)
		return
	}
	e.k.After(sim.Duration(e.sc.Spec.Cluster.PodNetworkTeardown.Duration), e.evNetGone, id, 0)
}

// onNetGone: the sandbox is gone with its IP, and the pod object with it: its
// endpoint leaves the EndpointSlice and its node has room again.
func (e *Engine) onNetGone(ev sim.Event) {
	id := ev.Obj
	p := &e.pods[id]
	p.phase = podGone
	p.grp.Remove()
	if p.envoy >= 0 {
		e.mesh.Remove(p.envoy)
	}
	e.mesh.Forget(id)
	e.nodes[p.node].pods--
	e.sched.Remove("service/" + p.name)
	svc := &e.services[p.svc]
	for i, x := range svc.pods {
		if x == id {
			svc.pods = append(svc.pods[:i], svc.pods[i+1:]...)
			break
		}
	}
	e.routing.Changed(p.svc)
	e.roomFreed()
	e.deployments.Changed(p.svc, 0)
}

// registerLifecycle registers the event kinds of pod lifecycle events with the kernel.
func (e *Engine) registerLifecycle() {
	e.evSchedule = e.k.Register(e.onSchedule)
	e.evPodStart = e.k.Register(e.onPodStart)
	e.evProbe = e.k.Register(e.onProbe)
	e.evSigterm = e.k.Register(e.onSigterm)
	e.evKill = e.k.Register(e.onKill)
	e.evNetGone = e.k.Register(e.onNetGone)
}
