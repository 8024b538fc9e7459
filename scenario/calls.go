package scenario

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Call is one step of a request's calls to another Service: a call (service), or
// calls made at once (parallel), the step ending when all of them have ended.
type Call struct {
	// Service called, by name, through its ClusterIP (or the pod's sidecar). Set it
	// or Parallel.
	Service string `yaml:"service"`
	// Parallel lists calls made at once; the step ends when each has ended. Its calls
	// set their own keys, and none of them is parallel again. Set it or Service.
	Parallel []Call `yaml:"parallel"`
	// Timeout of one attempt, from sending to the last byte of the answer, greater
	// than 0. Default: the timeout of the pod's client.
	Timeout *metav1.Duration `yaml:"timeout"`
	// Retries are further attempts after a failed one (an error or a timeout), each
	// on whatever connection the pool and kube-proxy give it next. Default: 0.
	Retries int `yaml:"retries"`
	// Probability is the share of requests that make this call, from 0 to 1.
	// Default: 1.
	Probability *float64 `yaml:"probability"`
	// Count of calls made one after another, at least 1. Default: 1.
	Count *int `yaml:"count"`
	// RequestBytes is the body of each call, not negative. Default: the pod's
	// client.request.bodyBytes.
	RequestBytes *int64 `yaml:"requestBytes"`
	// Optional: a call that still fails after its retries does not fail the request.
	// Default: false, the request fails with a 503.
	Optional bool `yaml:"optional"`
}

// CallClient is how a service's pods call other services: a client's keys, for the
// calls every pod makes. Each pod keeps its own pools per Service it calls.
type CallClient struct {
	// Library sets the connection defaults of a real client library (see `trafficlab
	// libraries`); fields set under Connections win. Unset: the generic defaults.
	Library string `yaml:"library"`
	// Connections is how the pod pools its connections to each Service it calls.
	// Reuse per-thread is a client's closed loop only; a pod's calls take none or
	// shared. Default: the library's, else shared.
	Connections Connections `yaml:"connections"`
	// Timeout of one attempt of a call, greater than 0, unless the call sets its own.
	// Default: the library's own timeout when it has one, else 30s.
	Timeout *metav1.Duration `yaml:"timeout"`
	// Request is what each call sends: its method and sizes.
	Request Request `yaml:"request"`
	// PropagateDeadline gives each attempt at most the time its request has left
	// before its caller's own timeout, as gRPC does with grpc-timeout. Default: false.
	PropagateDeadline bool `yaml:"propagateDeadline"`
	// Work is the CPU the pod's app spends on each call and each new connection,
	// on its own container and its limit, before the call goes out. Unset fields
	// take the library's measured costs; steady does not apply to calls.
	Work ClientWork `yaml:"work"`
}

// defaultCalls fills a service pod's call steps and its client.
func defaultCalls(p *Pod) {
	if len(p.Calls) == 0 {
		return
	}
	if p.Client == nil {
		p.Client = &CallClient{}
	}
	c := p.Client
	as := Client{Library: c.Library, Timeout: c.Timeout, Connections: c.Connections, Request: c.Request, Work: c.Work}
	defaultClient(&as)
	c.Timeout, c.Connections, c.Request, c.Work = as.Timeout, as.Connections, as.Request, as.Work
	for i := range p.Calls {
		defaultCall(&p.Calls[i], c)
		for j := range p.Calls[i].Parallel {
			defaultCall(&p.Calls[i].Parallel[j], c)
		}
	}
}

func defaultCall(c *Call, client *CallClient) {
	if c.Parallel != nil {
		return
	}
	if c.Timeout == nil {
		c.Timeout = &metav1.Duration{Duration: client.Timeout.Duration}
	}
	if c.Probability == nil {
		one := 1.0
		c.Probability = &one
	}
	if c.Count == nil {
		one := 1
		c.Count = &one
	}
	if c.RequestBytes == nil {
		n := client.Request.BodyBytes
		c.RequestBytes = &n
	}
}

// Calls are the calls step c makes: itself, or the calls it makes at once.
func (c *Call) Calls() []*Call {
	if c.Parallel == nil {
		return []*Call{c}
	}
	out := make([]*Call, len(c.Parallel))
	for i := range c.Parallel {
		out[i] = &c.Parallel[i]
	}
	return out
}

// HasCalls tells whether any service's pods call services.
func (sc *Scenario) HasCalls() bool {
	return slices.ContainsFunc(sc.Spec.Services, func(s Service) bool { return len(s.Pod.Calls) > 0 })
}

// CallLevels are each service's place in the calls: 0 for one no service calls,
// else one more than its furthest caller's. Engines end callers before the
// services they call, so that no call fails for the run's end.
func (sc *Scenario) CallLevels() map[string]int {
	level := map[string]int{}
	for range sc.Spec.Services { // as many passes as services: validation rules out cycles
		for i := range sc.Spec.Services {
			from := sc.Spec.Services[i].Name
			for _, to := range sc.Spec.Services[i].Pod.Callees() {
				level[to] = max(level[to], level[from]+1)
			}
		}
	}
	return level
}

// SpokenTo tells whether a client of service name, or a service whose pods call it,
// speaks a protocol that is: the engines' pods answer gRPC when one speaks grpc.
func (sc *Scenario) SpokenTo(name string, is func(protocol string) bool) bool {
	if slices.ContainsFunc(sc.Spec.Clients, func(c Client) bool { return c.Target == name && is(c.Connections.Protocol) }) {
		return true
	}
	return slices.ContainsFunc(sc.Spec.Services, func(s Service) bool {
		return s.Pod.Client != nil && slices.Contains(s.Pod.Callees(), name) && is(s.Pod.Client.Connections.Protocol)
	})
}

// Callees are the Services pod p's calls name, in the order they first name them.
func (p *Pod) Callees() []string {
	var out []string
	for i := range p.Calls {
		for _, c := range p.Calls[i].Calls() {
			if !slices.Contains(out, c.Service) {
				out = append(out, c.Service)
			}
		}
	}
	return out
}
