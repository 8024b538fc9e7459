package scenario

import (
	"fmt"
	"slices"
	"strings"

	"trafficlab/model/library"
)

// callKeys are the keys of one call, which a parallel step leaves to its calls.
var callKeys = []string{"timeout", "retries", "probability", "count", "requestBytes", "optional"}

// calls checks every service's call steps: the services they name, each call's keys,
// the pods' client, and the graph they make, which must have no cycle: a request
// that comes back to a service it passed through would never end.
func (v *validator) calls(svcs []Service, services map[string]*Service) {
	known := serviceNames(services)
	for i := range svcs {
		pod := fmt.Sprintf("spec.services[%d].pod", i)
		p := &svcs[i].Pod
		if len(p.Calls) == 0 {
			for _, f := range []string{"afterCalls", "client"} {
				if v.written(pod + "." + f) {
					v.warnf(pod+"."+f, "applies only with calls; ignored")
				}
			}
			continue
		}
		if p.AfterCalls != nil {
			v.distribution(pod+".afterCalls", p.AfterCalls)
		}
		v.callClient(pod+".client", p.Client)
		for j := range p.Calls {
			step := fmt.Sprintf("%s.calls[%d]", pod, j)
			c := &p.Calls[j]
			if c.Parallel == nil {
				v.call(step, c, services, known)
			} else {
				v.parallel(step, c, services, known)
			}
			for k, callee := range append([]Call{*c}, c.Parallel...) {
				at := step + ".service"
				if k > 0 {
					at = fmt.Sprintf("%s.parallel[%d].service", step, k-1)
				}
				if svc, ok := services[callee.Service]; ok && svc.Headless() {
					v.headlessCaller(at, callee.Service, p.Client.Library, svcs[i].Sidecar != nil)
				}
			}
		}
	}
	v.cycles(svcs)
}

// parallel checks a step of calls made at once.
func (v *validator) parallel(step string, c *Call, services map[string]*Service, known string) {
	if c.Service != "" {
		v.errorf(step+".parallel", "cannot be set with service: a step is one call (service) or calls made at once (parallel); set one")
		return
	}
	if len(c.Parallel) == 0 {
		v.errorf(step+".parallel", "must list at least one call")
	}
	for _, k := range callKeys {
		if v.written(step + "." + k) {
			v.errorf(step+"."+k, "is a call's key: a parallel step has none of its own; set it on each of its calls")
		}
	}
	for k := range c.Parallel {
		at := fmt.Sprintf("%s.parallel[%d]", step, k)
		if c.Parallel[k].Parallel != nil {
			v.errorf(at+".parallel", "cannot be nested: the calls of a parallel step are single calls")
			continue
		}
		v.call(at, &c.Parallel[k], services, known)
	}
}

// call checks one call's keys.
func (v *validator) call(at string, c *Call, services map[string]*Service, known string) {
	switch svc, ok := services[c.Service]; {
	case c.Service == "":
		v.errorf(at, "needs service (a Service to call) or parallel (calls made at once)")
	case !ok:
		v.errorf(at+".service", "no service named %q; %s", c.Service, known)
	case svc.Replicas == 0 && svc.Autoscaler == nil:
		v.warnf(at+".service", "%s", noReplicas(svc, "call"))
	}
	if c.Timeout.Duration <= 0 {
		v.errorf(at+".timeout", "must be greater than 0")
	}
	if c.Retries < 0 {
		v.errorf(at+".retries", "must not be negative")
	}
	if p := *c.Probability; !(p >= 0 && p <= 1) {
		v.errorf(at+".probability", "must be from 0 to 1: the share of requests that make the call")
	}
	if *c.Count < 1 {
		v.errorf(at+".count", "must be at least 1")
	}
	if *c.RequestBytes < 0 {
		v.errorf(at+".requestBytes", "must not be negative")
	}
}

// callClient checks the client a service's pods call with.
func (v *validator) callClient(path string, c *CallClient) {
	if c.Library != "" {
		if _, ok := library.Lookup(c.Library); !ok {
			v.errorf(path+".library", "unknown library %q; known: %s", c.Library, strings.Join(library.Names(), ", "))
		}
	}
	if c.Timeout.Duration <= 0 {
		v.errorf(path+".timeout", "must be greater than 0")
	}
	v.connections(path+".connections", &c.Connections)
	if c.Connections.Reuse == ReusePerThread {
		v.errorf(path+".connections.reuse", "per-thread is a client's closed loop; a pod's calls reuse none or shared (a pool per pod and called Service)")
	}
	v.request(path, &c.Request)
	if v.written(path + ".work.steady") {
		v.warnf(path+".work.steady", "applies to a client's load generator; a pod's calls burn none: ignored")
	}
}

// cycles reports each call that closes a cycle of services, at that call.
func (v *validator) cycles(svcs []Service) {
	type edge struct{ to, at string }
	out := map[string][]edge{}
	for i := range svcs {
		from := svcs[i].Name
		for j, c := range svcs[i].Pod.Calls {
			step := fmt.Sprintf("spec.services[%d].pod.calls[%d]", i, j)
			if c.Parallel == nil {
				out[from] = append(out[from], edge{c.Service, step + ".service"})
			}
			for k, p := range c.Parallel {
				out[from] = append(out[from], edge{p.Service, fmt.Sprintf("%s.parallel[%d].service", step, k)})
			}
		}
	}
	// Depth first from each service in order; a call to a service on the path closes
	// a cycle.
	const (
		unseen = iota
		onPath
		finished
	)
	state := map[string]int{}
	var path []string
	var visit func(s string)
	visit = func(s string) {
		state[s] = onPath
		path = append(path, s)
		for _, e := range out[s] {
			switch state[e.to] {
			case unseen:
				visit(e.to)
			case onPath:
				loop := append(slices.Clone(path[slices.Index(path, e.to):]), e.to)
				v.errorf(e.at, "closes a cycle of calls, %s: a request would never end", strings.Join(loop, " → "))
			}
		}
		path = path[:len(path)-1]
		state[s] = finished
	}
	for i := range svcs {
		if state[svcs[i].Name] == unseen {
			visit(svcs[i].Name)
		}
	}
}
