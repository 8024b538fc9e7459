package simulate

import "trafficlab/simulate/deployment"

// deploymentPods is what the Deployment controllers see of the Engine's pods and
// do to them (deployment.Pods).
type deploymentPods struct{ e *Engine }

func (d deploymentPods) Active(si int32, into []deployment.Replica) []deployment.Replica {
	e := d.e
	for _, id := range e.services[si].pods {
		p := &e.pods[id]
		if p.deleting {
			continue
		}
		into = append(into, deployment.Replica{Pod: id, Pending: -1, Revision: p.revision,
			Name: p.name, UID: p.uid, Node: e.nodes[p.node].name, Starting: p.phase == podStarting,
			Ready: p.ready, ReadySince: p.readySince, Created: p.created})
	}
	for i := range e.pending {
		if pp := &e.pending[i]; pp.svc == si {
			into = append(into, deployment.Replica{Pod: -1, Pending: i, Revision: pp.revision,
				Name: pp.name, UID: pp.uid, Created: pp.created})
		}
	}
	return into
}

func (d deploymentPods) Terminating(si, rev int32) bool {
	for _, id := range d.e.services[si].pods {
		if d.e.pods[id].revision != rev {
			return true
		}
	}
	return false
}

func (d deploymentPods) Create(si, rev int32) (name string, placed bool, reason string) {
	id, reason := d.e.createPod(si, rev)
	if id < 0 {
		return d.e.pending[len(d.e.pending)-1].name, false, reason
	}
	return d.e.pods[id].name, true, ""
}

func (d deploymentPods) Delete(pod int32) { d.e.deletePod(pod) }

func (d deploymentPods) DeletePending(i int) { d.e.deletePending(i) }
