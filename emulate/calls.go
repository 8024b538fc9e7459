package emulate

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"trafficlab/emulate/serve"
	"trafficlab/emulate/topo"
	"trafficlab/result"
	"trafficlab/scenario"
)

// Services that call services: each pod's `trafficlab serve` makes its calls for
// real to the called Services' ClusterIPs, through the same kube-proxy rules, and
// writes what it did when it exits. Once the load is over emulate ends every pod
// that still runs and adds their figures up into the Result's services and edges,
// as simulate counts them. A pod killed (SIGKILL) writes nothing: its calls are
// missing from the figures.

// figuresWait bounds how long the pods get to exit and write their figures.
const figuresWait = 10 * time.Second

func hasCalls(sc *scenario.Scenario) bool {
	for i := range sc.Spec.Services {
		if len(sc.Spec.Services[i].Pod.Calls) > 0 {
			return true
		}
	}
	return false
}

// serveArgs are the flags of pod name's `trafficlab serve` beyond its spec: gRPC
// when its clients speak it; with calls, its service, each called Service's
// address and where its figures go.
func (c *cluster) serveArgs(service, name string) []string {
	var args []string
	if grpcCallers(c.sc, service) {
		args = append(args, "--grpc")
	}
	if c.figures == "" {
		return args
	}
	args = append(args, "--service", service, "--figures", filepath.Join(c.figures, name+".json"))
	for _, to := range c.sc.Spec.Services[serviceIndex(c.sc, service)].Pod.Callees() {
		if c.sc.Spec.Services[serviceIndex(c.sc, to)].Headless() {
			args = append(args, "--call", to+"="+headlessTarget(to), "--dns", c.dns.addr())
			continue
		}
		args = append(args, "--call", fmt.Sprintf("%s=http://%s:%d/", to, topo.ServiceIP(serviceIndex(c.sc, to)), servicePort))
	}
	return args
}

// addCalls ends the pods still running (SIGTERM: each writes its figures as it
// exits) and adds every pod's figures to r. Callers end before the services they
// call, so that no call fails for the run's end.
func (c *cluster) addCalls(r *result.Result) {
	c.mu.Lock()
	servers := append([]*server(nil), c.servers...)
	c.closing = true // the pods' exits are the run's end, not pod changes
	c.mu.Unlock()
	level := callLevels(c.sc)
	deadline := time.After(figuresWait)
	for l := 0; l <= len(c.sc.Spec.Services); l++ {
		var ending []*server
		for _, s := range servers {
			if level[s.service] == l {
				_ = s.cmd.Process.Signal(syscall.SIGTERM)
				ending = append(ending, s)
			}
		}
		for _, s := range ending {
			select {
			case <-s.exited:
			case <-deadline:
			}
		}
	}
	var figs []serve.Figures
	var errs []error
	for _, s := range servers {
		data, err := os.ReadFile(filepath.Join(c.figures, s.name+".json"))
		if errors.Is(err, os.ErrNotExist) {
			continue // killed: its figures are lost
		}
		var f serve.Figures
		if err == nil {
			err = json.Unmarshal(data, &f)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("pod %s's figures: %w", s.name, err))
			continue
		}
		figs = append(figs, f)
	}
	c.mu.Lock()
	c.errs = append(c.errs, errs...)
	c.mu.Unlock()
	addFigures(r, c.sc, figs)
}

// addFigures adds the pods' figures up into r: each service's own, each edge's in
// the order simulate lists them (services in order, each one's callees as its calls
// first name them), and the calls each pod answered to its requests.
func addFigures(r *result.Result, sc *scenario.Scenario, figs []serve.Figures) {
	r.Services = sc.ServiceConfigs()
	answered := map[string]int64{}
	for i := range r.Services {
		rs := &r.Services[i]
		var held result.Latencies
		for _, f := range figs {
			if f.Service == rs.Name {
				rs.Requests += f.Requests
				rs.Errors += f.Errors
				f.Held.AddTo(&held)
			}
		}
		lat := held.Latency()
		rs.Calls, rs.LatencyMS = true, &lat
	}
	for i := range sc.Spec.Services {
		from := sc.Spec.Services[i].Name
		for _, to := range sc.Spec.Services[i].Pod.Callees() {
			e := result.Edge{From: from, To: to}
			var lat result.Latencies
			reached := map[string]bool{}
			for _, f := range figs {
				for _, cf := range f.Calls {
					if cf.Edge.From != from || cf.Edge.To != to {
						continue
					}
					e.Requests += cf.Edge.Requests
					e.Attempts += cf.Edge.Attempts
					e.Retries += cf.Edge.Retries
					e.Errors.AddAll(cf.Edge.Errors)
					e.AttemptErrors.AddAll(cf.Edge.AttemptErrors)
					e.ConnectionsOpened += cf.Edge.ConnectionsOpened
					e.PeakOpen += cf.Edge.PeakOpen
					cf.Latency.AddTo(&lat)
					for pod, n := range cf.Answered {
						reached[pod] = true
						answered[pod] += n
					}
				}
			}
			e.LatencyMS = lat.Latency()
			e.PodsReached = len(reached)
			r.Edges = append(r.Edges, e)
		}
	}
	for i := range r.Pods {
		r.Pods[i].Requests += answered[r.Pods[i].Name]
	}
}

// callLevels are each service's place in the calls: 0 for one no service calls,
// else one more than its furthest caller's.
func callLevels(sc *scenario.Scenario) map[string]int {
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
