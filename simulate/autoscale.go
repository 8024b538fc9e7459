package simulate

import (
	"fmt"
	"time"

	"trafficlab/model/replicaset"
	"trafficlab/result"
	"trafficlab/sim"
)

// epoch maps simulated time onto the wall-clock times the Kubernetes algorithms
// read (pod start, condition transitions, metric timestamps).
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func clock(t sim.Time) time.Time { return epoch.Add(time.Duration(t)) }

// scaleTo sets service si's Deployment to n replicas: the ReplicaSet controller
// creates pods, or deletes the ones it ranks first (replicaset.PodsToDelete).
func (e *Engine) scaleTo(si int32, n int, reason string) {
	svc := &e.services[si]
	now := e.k.Now()
	ev := result.ScaleEvent{TS: now.Seconds(), Service: svc.name, From: svc.replicas, To: n, Reason: reason}
	svc.replicas = n
	var active []int32
	var ranked []replicaset.Pod
	for _, id := range svc.pods {
		p := &e.pods[id]
		if p.deleting {
			continue
		}
		active = append(active, id)
		rp := replicaset.Pod{
			Name: p.name, UID: p.uid, Node: e.nodes[p.node].name, Phase: replicaset.PhaseRunning,
			Ready: p.ready, Created: clock(p.created),
		}
		if p.phase == podStarting {
			rp.Phase = replicaset.PhasePending
		}
		if p.ready {
			rp.ReadySince = clock(p.readySince)
		}
		ranked = append(ranked, rp)
	}
	for i := len(active); i < n; i++ {
		ev.Created = append(ev.Created, e.pods[e.createPod(si)].name)
	}
	if n < len(active) {
		for _, i := range replicaset.PodsToDelete(ranked, len(active)-n, clock(now)) {
			ev.Deleted = append(ev.Deleted, e.pods[active[i]].name)
			e.deletePod(active[i])
		}
	}
	e.scaleEvents = append(e.scaleEvents, ev)
}

// uid is a pod's metadata.uid: random, as the API server makes it, so that ties the
// ReplicaSet controller breaks by UID fall by chance, reproducibly.
func uid(p *pod) string { return fmt.Sprintf("%016x", p.rng.Uint64()) }
