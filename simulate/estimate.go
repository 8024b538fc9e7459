package simulate

import (
	"math"
	"time"

	"trafficlab/model/dist"
	"trafficlab/scenario"
	"trafficlab/simulate/loadgen"
)

// RequestsPerWallSecond is about how many simulated requests the engine runs per
// wall second on one core, for estimates of a run's wall time: the hour-long
// reference scenario ran at 1.0 M/s on this project's 2-core AMD EPYC with other
// work on it (load average 10), 2.3 M/s alone; 1,000 pods ran at 0.53 M/s. An
// estimate is good to a factor of two or so.
const RequestsPerWallSecond = 1e6

// Offered estimates how many requests a validated scenario's run sends: an open
// loop's rate over the time it runs, a closed loop's threads over the time one
// request takes (the round trip, service and wait time, calls, think time and
// overhead, at most the timeout), at most what its service's pods serve; each
// request again for every call it leads to (Requests counts those too). It reads
// the scenario only, so it is cheap, and it is for telling the user how long a run
// will take.
func Offered(sc *scenario.Scenario) float64 {
	total := 0.0
	run := sc.Spec.Duration.Seconds()
	for i := range sc.Spec.Clients {
		c := &sc.Spec.Clients[i]
		closed := closedRate(sc, c)
		n := 0.0
		switch {
		case c.RateCurve != nil:
			n = loadgen.NewCurve(c.RateCurve, sc.Spec.Duration.Duration).Count(run)
		case len(c.Phases) > 0:
			n = phasesCount(c, closed, run)
		case c.Rate != nil:
			n = c.Rate.PerSecond * run
		default:
			n = closed(c.Threads) * run
		}
		total += n * float64(max(c.Replicas, 1)) * hops(sc, c.Target, 0)
	}
	return total
}

// hops is the requests one request to service name leads to at the pods: itself and
// the calls it makes, theirs included, as many as they are drawn on average.
func hops(sc *scenario.Scenario, name string, depth int) float64 {
	svc := serviceNamed(sc, name)
	if svc == nil || depth > len(sc.Spec.Services) {
		return 1
	}
	n := 1.0
	for _, c := range calls(svc) {
		n += *c.Probability * float64(*c.Count) * hops(sc, c.Service, depth+1)
	}
	return n
}

// hold is the time a request to svc holds its worker: its work and wait, its calls
// (a parallel step as long as its longest call), and the work after them.
func hold(sc *scenario.Scenario, svc *scenario.Service, depth int) float64 {
	t := mean(&svc.Pod.ServiceTime) + mean(svc.Pod.WaitTime) + mean(svc.Pod.AfterCalls)
	if depth > len(sc.Spec.Services) {
		return t
	}
	trip := 2 * sc.Spec.Cluster.Network.Latency.Seconds()
	for _, step := range svc.Pod.Calls {
		longest := 0.0
		for _, c := range step.Calls() {
			if callee := serviceNamed(sc, c.Service); callee != nil {
				longest = max(longest, *c.Probability*float64(*c.Count)*(trip+hold(sc, callee, depth+1)))
			}
		}
		t += longest
	}
	return t
}

// calls are every call of svc's steps, those of parallel steps included.
func calls(svc *scenario.Service) []*scenario.Call {
	var out []*scenario.Call
	for i := range svc.Pod.Calls {
		out = append(out, svc.Pod.Calls[i].Calls()...)
	}
	return out
}

func serviceNamed(sc *scenario.Scenario, name string) *scenario.Service {
	for i := range sc.Spec.Services {
		if sc.Spec.Services[i].Name == name {
			return &sc.Spec.Services[i]
		}
	}
	return nil
}

// mean is a distribution's mean in seconds; 0 when unset.
func mean(d *scenario.Distribution) float64 {
	s, err := dist.New(d.Spec())
	if err != nil {
		return 0
	}
	return s.Mean() / 1e9
}

// phasesCount is the requests of a client pod's phases, repeated, within run seconds.
func phasesCount(c *scenario.Client, closed func(int) float64, run float64) float64 {
	n, t := 0.0, 0.0
	for r := 0; r < max(c.Repeat, 1); r++ {
		for i := range c.Phases {
			p := &c.Phases[i]
			if t >= run {
				return n
			}
			rate := closed(p.Threads)
			if p.Rate != nil {
				rate = p.Rate.PerSecond
				if p.RampTo != nil {
					rate = (rate + p.RampTo.PerSecond) / 2
				}
			}
			length := math.Inf(1)
			if p.Duration != nil {
				length = p.Duration.Seconds()
			} else if rate > 0 {
				length = float64(p.Requests) / rate
			}
			length = min(length, run-t)
			n += rate * length
			t += length
			if p.Pause != nil {
				t += p.Pause.Seconds()
			}
		}
	}
	return n
}

// closedRate returns the request rate of a given number of closed-loop threads in
// one of client c's pods.
func closedRate(sc *scenario.Scenario, c *scenario.Client) func(int) float64 {
	svc := serviceNamed(sc, c.Target)
	cycle := 2*sc.Spec.Cluster.Network.Latency.Seconds() + mean(c.ThinkTime) + c.Overhead.Seconds()
	capacity := math.Inf(1)
	if svc != nil && svc.Replicas > 0 {
		work, held := mean(&svc.Pod.ServiceTime), hold(sc, svc, 0)
		cycle += held
		if work > 0 {
			// Every pod's cores, at most the cluster's.
			cores := math.Inf(1)
			if limit := podLimit(svc); limit > 0 {
				cores = float64(svc.Replicas) * limit
			}
			capacity = min(cores, clusterCores(sc)) / work
		}
		if k := svc.Pod.Concurrency; k > 0 && held > 0 {
			capacity = min(capacity, float64(svc.Replicas*k)/held)
		}
	}
	if c.Timeout != nil {
		cycle = min(cycle, c.Timeout.Seconds())
	}
	// A request takes at least the simulator's nanosecond.
	cycle = max(cycle, float64(time.Nanosecond)/1e9)
	// The pods' capacity is shared by the client's pods.
	share := capacity / float64(max(c.Replicas, 1))
	return func(threads int) float64 { return min(float64(threads)/cycle, share) }
}

// podLimit is the CPU limit of one of the service's pods; 0 for none.
func podLimit(svc *scenario.Service) float64 {
	if q := svc.Pod.CPU; q != nil {
		return q.AsApproximateFloat64()
	}
	if q, ok := svc.Pod.Resources.Limits["cpu"]; ok {
		return q.AsApproximateFloat64()
	}
	return 0
}

// clusterCores is every node's cores; +Inf when a pool's are unlimited.
func clusterCores(sc *scenario.Scenario) float64 {
	cores := 0.0
	for _, p := range sc.Spec.Cluster.Nodes {
		if p.CPU == nil {
			return math.Inf(1)
		}
		cores += float64(p.Count) * p.CPU.AsApproximateFloat64()
	}
	return cores
}
