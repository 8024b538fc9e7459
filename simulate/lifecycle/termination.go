package lifecycle

import (
	"time"

	"trafficlab/model/kubelet"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// onStart: the container is up and the app listens.
func (l *Pods) onStart(ev sim.Event) {
	if l.phases[ev.Obj] == Starting {
		l.listening(ev.Obj)
	}
}

func (l *Pods) listening(id int32) {
	p := &l.pods[id]
	l.phases[id] = Running
	p.Started = l.k.Now()
	probe := l.specs[p.svc].ReadinessProbe
	if probe == nil || l.settled {
		// No readiness probe: Ready as soon as the container runs. A pod of the
		// settled initial cluster has passed its probes long ago.
		l.setReady(id, true)
		if probe != nil {
			p.probeOK, p.probeRun = true, *probe.SuccessThreshold
			l.k.After(sim.Time(*probe.PeriodSeconds)*sim.Time(time.Second), l.evProbe, id, 0)
		}
		return
	}
	// The prober worker probes at once and then every period, skipping results until
	// initialDelaySeconds have passed since the container started
	// (pkg/kubelet/prober/worker.go run and doProbe).
	l.k.After(0, l.evProbe, id, 0)
}

// onProbe runs one readiness probe. It succeeds while the app listens: a draining app
// has closed its listener, an exited one has none. Readiness starts as a failure, and
// the condition flips after successThreshold or failureThreshold results in a row
// (worker.go doProbe resultRun).
func (l *Pods) onProbe(ev sim.Event) {
	id := ev.Obj
	p := &l.pods[id]
	if l.phases[id] >= Exited {
		return // the container is gone: no more probes
	}
	probe := l.specs[p.svc].ReadinessProbe
	period := sim.Time(*probe.PeriodSeconds) * sim.Time(time.Second)
	l.k.After(period, l.evProbe, id, 0)
	if l.k.Now()-p.Started < sim.Time(probe.InitialDelaySeconds)*sim.Time(time.Second) {
		return
	}
	ok := l.phases[id] == Running
	if ok != p.probeOK {
		p.probeOK, p.probeRun = ok, 0
	}
	p.probeRun++
	threshold := *probe.FailureThreshold
	if ok {
		threshold = *probe.SuccessThreshold
	}
	if p.probeRun >= threshold && ok != p.Ready {
		l.setReady(id, ok)
	}
}

// setReady changes the pod's Ready condition, and so its endpoint.
func (l *Pods) setReady(id int32, ready bool) {
	p := &l.pods[id]
	p.Ready = ready
	p.ReadySince = l.k.Now()
	if ready && p.FirstReady < 0 {
		p.FirstReady = p.ReadySince
	}
	l.cluster.ReadyChanged(id, ready)
}

// MarkDeleted sets pod id's deletionTimestamp, and tells whether it was not set
// already.
func (l *Pods) MarkDeleted(id int32) bool {
	p := &l.pods[id]
	if p.Deleting {
		return false
	}
	p.Deleting = true
	p.DeletedAt = l.k.Now()
	return true
}

// Delete starts a pod's graceful termination, as the API server and kubelet run it:
// the deletionTimestamp turns its endpoint terminating (not ready) while, in
// parallel, the kubelet runs preStop, then sends SIGTERM, and SIGKILL at the end of
// the grace period (kuberuntime_container.go killContainer: the hook's time is taken
// from the grace period, but the app always gets at least 2 s after SIGTERM:
// kubelet.Termination).
func (l *Pods) Delete(id int32) {
	if !l.MarkDeleted(id) {
		return
	}
	p := &l.pods[id]
	l.cluster.Terminating(id)
	if l.phases[id] == Starting {
		l.Exit(id)
		return
	}
	sigterm, sigkill := kubelet.Termination(l.specs[p.svc].TerminationSpec())
	l.k.After(sim.Duration(sigterm), l.evSigterm, id, 0)
	l.k.After(sim.Duration(sigkill), l.evKill, id, 0)
}

// onSigterm: the app either exits at once or drains.
func (l *Pods) onSigterm(ev sim.Event) {
	id := ev.Obj
	p := &l.pods[id]
	if l.phases[id] != Running {
		return
	}
	on := &l.specs[p.svc].OnSigterm
	if on.Action != scenario.SigtermDrain {
		l.Exit(id)
		return
	}
	// Drain as Go's http.Server.Shutdown does: close the listener, close idle
	// keep-alive connections, let requests in progress finish.
	l.phases[id] = Draining
	p.ClosedAt = l.k.Now()
	if on.DrainTimeout != nil {
		l.k.After(sim.Duration(on.DrainTimeout.Duration), l.evKill, id, 0)
	}
	l.Drained(id)
}

// Drained ends a draining pod's process once its app has nothing left in progress.
func (l *Pods) Drained(id int32) {
	if l.phases[id] == Draining && l.cluster.Idle(id) {
		l.Exit(id)
	}
}

// onKill: SIGKILL at the end of the grace period, or the app's own drain timeout.
func (l *Pods) onKill(ev sim.Event) {
	if ph := l.phases[ev.Obj]; ph == Running || ph == Draining {
		l.Exit(ev.Obj)
	}
}

// Exit ends the pod's process. The kernel closes its sockets (Cluster.Exited); the
// pod is no longer Ready; its IP goes when the sandbox is torn down.
func (l *Pods) Exit(id int32) {
	p := &l.pods[id]
	now := l.k.Now()
	wasStarting := l.phases[id] == Starting
	l.phases[id] = Exited
	p.Ended = now
	if p.ClosedAt == 0 {
		p.ClosedAt = now
	}
	l.cluster.Exited(id)
	if l.pods[id].Ready {
		l.setReady(id, false)
	}
	if wasStarting {
		l.k.After(0, l.evNetGone, id, 0)
		return
	}
	l.k.After(l.teardown, l.evNetGone, id, 0)
}

// onNetGone: the sandbox is gone with its IP, and the pod object with it.
func (l *Pods) onNetGone(ev sim.Event) {
	l.phases[ev.Obj] = Gone
	l.cluster.Gone(ev.Obj)
}
