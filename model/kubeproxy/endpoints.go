package kubeproxy

// EndpointState is one endpoint of an EndpointSlice with its conditions.
type EndpointState struct {
	Endpoint    Endpoint
	Ready       bool
	Serving     bool
	Terminating bool
}

// Conditions are the EndpointSlice controller's conditions for a pod
// (staging/src/k8s.io/endpointslice/utils.go podToEndpoint): serving follows the
// pod's Ready condition, terminating its deletionTimestamp, and ready is serving and
// not terminating (publishNotReadyAddresses aside, which trafficlab does not model).
func Conditions(ep Endpoint, podReady, deleting bool) EndpointState {
	return EndpointState{Endpoint: ep, Ready: podReady && !deleting, Serving: podReady, Terminating: deleting}
}

// Usable appends to out the endpoints kube-proxy programs for cluster traffic, in
// slice order: the ready ones; only when none is ready, the serving terminating ones,
// so that a Service whose pods are all shutting down still answers
// (pkg/proxy/topology.go CategorizeEndpoints, ProxyTerminatingEndpoints, GA in 1.28).
func Usable(eps []EndpointState, out []Endpoint) []Endpoint {
	start := len(out)
	for _, e := range eps {
		if e.Ready {
			out = append(out, e.Endpoint)
		}
	}
	if len(out) > start {
		return out
	}
	for _, e := range eps {
		if e.Serving && e.Terminating {
			out = append(out, e.Endpoint)
		}
	}
	return out
}
