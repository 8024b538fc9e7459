package simulate

import (
	"trafficlab/model/kubeproxy"
)

// Usable is what kube-proxy would program for service si from its pods' state now:
// the Engine is the routing subsystem's endpoints.Source.
func (e *Engine) Usable(si int32) []kubeproxy.Endpoint {
	svc := &e.services[si]
	states := make([]kubeproxy.EndpointState, 0, len(svc.pods))
	for _, id := range svc.pods {
		st := e.life.Pod(id)
		states = append(states, kubeproxy.Conditions(id, st.Ready, st.Deleting))
	}
	return kubeproxy.Usable(states, nil)
}

// Ready is the pods of service si whose Ready condition holds now: what cluster DNS
// answers for a headless Service.
func (e *Engine) Ready(si int32) []kubeproxy.Endpoint {
	var ready []kubeproxy.Endpoint
	for _, id := range e.services[si].pods {
		st := e.life.Pod(id)
		if kubeproxy.Conditions(id, st.Ready, st.Deleting).Ready {
			ready = append(ready, id)
		}
	}
	return ready
}
