package simulate

import (
	"trafficlab/scenario"
	"trafficlab/simulate/lifecycle"
)

// faultTargets is what the faults subsystem acts on: the Engine's pods and paths,
// through faults.Cluster.
type faultTargets struct{ e *Engine }

// killPod deletes a pod as Chaos Mesh's pod-kill does, with gracePeriodSeconds 0: the
// pod object goes at once, so its endpoint leaves and the ReplicaSet creates a
// replacement, and the kubelet kills the containers without SIGTERM or preStop.
func (e *Engine) killPod(id int32) {
	p := &e.pods[id]
	if e.life.MarkDeleted(id) {
		e.routing.Changed(p.svc)
		// The pod object is gone at once: pods waiting for room, then its
		// replacement, may take its place.
		e.sched.Remove("service/" + p.name)
		e.life.RoomFreed()
		e.createPod(p.svc, e.deployments.Revision(p.svc))
	}
	e.life.Exit(id)
}

// KillPods: a pod-kill fault fires.
func (c faultTargets) KillPods(target *scenario.Selector) {
	e := c.e
	for i := range e.pods {
		if e.matches(target, int32(i)) && e.life.Phase(int32(i)) < lifecycle.Exited {
			e.killPod(int32(i))
		}
	}
}

// Reconfigure: a network fault starts or ends.
func (c faultTargets) Reconfigure() {
	if c.e.net != nil {
		c.e.net.Reconfigure()
	}
}
