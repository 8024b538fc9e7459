package simulate

import (
	"trafficlab/simulate/deployment"
	"trafficlab/simulate/lifecycle"
)

// deploymentPods is what the Deployment controllers see of the Engine's pods and
// do to them (deployment.Pods).
type deploymentPods struct{ e *Engine }

func (d deploymentPods) Active(si int32, into []deployment.Replica) []deployment.Replica {
	e := d.e
	for _, id := range e.services[si].pods {
		p, st := &e.pods[id], e.life.Pod(id)
		if st.Deleting {
			continue
		}
		into = append(into, deployment.Replica{Pod: id, Pending: -1, Revision: p.revision,
			Name: p.name, UID: p.uid, Node: e.nodes[p.node].name, Starting: e.life.Phase(id) == lifecycle.Starting,
			Ready: st.Ready, ReadySince: st.ReadySince, Created: st.Created})
	}
	pending := e.life.Pending()
	for i := range pending {
		if pp := &pending[i]; pp.Svc == si {
			into = append(into, deployment.Replica{Pod: -1, Pending: i, Revision: pp.Revision,
				Name: pp.Name, UID: pp.UID, Created: pp.Created})
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
	name, id, reason := d.e.createPod(si, rev)
	return name, id >= 0, reason
}

func (d deploymentPods) Delete(pod int32) { d.e.life.Delete(pod) }

func (d deploymentPods) DeletePending(i int) { d.e.life.DeletePending(i) }
