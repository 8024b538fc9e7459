package emulate

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"trafficlab/placement"
	"trafficlab/scenario"
	"trafficlab/simulate"
)

// What this machine can run for real. Each pod is a namespace, a veth pair and (for
// a service) a server process; the load generator and every pod's work share the
// machine's cores. Past these the run would measure the machine, not the scenario.
const (
	MaxPods    = 40    // service and client pods
	MaxRate    = 5_000 // open-loop requests per second, all client pods together
	MaxThreads = 256   // closed-loop threads, all client pods together
)

// SizeError says which limit a scenario is over and the --scale that fits it.
type SizeError struct {
	What         string
	Have, Limit  float64
	Scale        float64
	ScaleFitting bool // false: scaling cannot bring it under (every count is already 1)
}

func (e *SizeError) Error() string {
	msg := fmt.Sprintf("the scenario has %s %s; emulate runs at most %s on one machine", num(e.Have), e.What, num(e.Limit))
	if e.ScaleFitting {
		msg += fmt.Sprintf(": try --scale %s, which keeps its ratios (pods per node, load per pod)", num(e.Scale))
	}
	return msg
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// checkSize refuses a scenario too large to run here; peakPods is the most service
// pods it has at once.
func checkSize(sc *scenario.Scenario, l *placement.Layout, peakPods int) error {
	pods := float64(peakPods + len(l.Clients))
	rate, threads := 0.0, 0.0
	for i := range sc.Spec.Clients {
		c := &sc.Spec.Clients[i]
		r, t := peakLoad(c)
		rate += r * float64(c.Replicas)
		threads += t * float64(c.Replicas)
	}
	for _, over := range []struct {
		what        string
		have, limit float64
	}{
		{"pods", pods, MaxPods},
		{"requests per second of open-loop load", rate, MaxRate},
		{"closed-loop threads", threads, MaxThreads},
	} {
		if over.have > over.limit {
			scale := math.Floor(over.limit/over.have*100) / 100
			return &SizeError{What: over.what, Have: over.have, Limit: over.limit, Scale: scale, ScaleFitting: scale > 0 && fits(sc, scale)}
		}
	}
	return nil
}

// fits tells whether sc at this scale is within every limit: rounding counts up
// to 1 can keep a scenario of many small Deployments over one.
func fits(sc *scenario.Scenario, scale float64) bool {
	scaled := *sc
	scaled.Spec = cloneSpec(&sc.Spec)
	Scale(&scaled, scale)
	e, err := simulate.New(&scaled)
	if err != nil {
		return false
	}
	l := e.Layout()
	return checkSize(&scaled, l, len(l.Pods)) == nil
}

// cloneSpec copies what Scale changes: node pools, services with their
// autoscalers, clients with their rates and phases.
func cloneSpec(spec *scenario.Spec) scenario.Spec {
	out := *spec
	out.Cluster.Nodes = slices.Clone(spec.Cluster.Nodes)
	out.Services = slices.Clone(spec.Services)
	for i := range out.Services {
		if a := out.Services[i].Autoscaler; a != nil {
			c := *a
			if a.MinReplicas != nil {
				m := *a.MinReplicas
				c.MinReplicas = &m
			}
			out.Services[i].Autoscaler = &c
		}
	}
	out.Clients = slices.Clone(spec.Clients)
	for i := range out.Clients {
		c := &out.Clients[i]
		c.Rate = cloneRate(c.Rate)
		c.Phases = slices.Clone(c.Phases)
		for j := range c.Phases {
			c.Phases[j].Rate, c.Phases[j].RampTo = cloneRate(c.Phases[j].Rate), cloneRate(c.Phases[j].RampTo)
		}
		if rc := c.RateCurve; rc != nil {
			curve := *rc
			curve.Points = slices.Clone(rc.Points)
			for j := range curve.Points {
				curve.Points[j].Rate = cloneRate(curve.Points[j].Rate)
			}
			if rc.Diurnal != nil {
				d := *rc.Diurnal
				d.Min, d.Max = cloneRate(d.Min), cloneRate(d.Max)
				curve.Diurnal = &d
			}
			c.RateCurve = &curve
		}
	}
	return out
}

func cloneRate(r *scenario.Rate) *scenario.Rate {
	if r == nil {
		return nil
	}
	c := *r
	return &c
}

// peakLoad is a client pod's highest open-loop rate and most closed-loop threads
// over its phases.
func peakLoad(c *scenario.Client) (rate, threads float64) {
	threads = float64(c.Threads)
	if c.Rate != nil {
		rate = c.Rate.PerSecond
	}
	if rc := c.RateCurve; rc != nil {
		for _, p := range rc.Points {
			rate = max(rate, p.Rate.PerSecond)
		}
		if rc.Diurnal != nil {
			rate = max(rate, rc.Diurnal.Max.PerSecond)
		}
	}
	for _, p := range c.Phases {
		threads = max(threads, float64(p.Threads))
		if p.Rate != nil {
			rate = max(rate, p.Rate.PerSecond)
		}
		if p.RampTo != nil {
			rate = max(rate, p.RampTo.PerSecond)
		}
	}
	return rate, threads
}

// Scale resizes sc by f, keeping its ratios: node pools, service replicas (and
// their autoscalers' bounds) and client replicas become round(n·f), at least 1;
// what rounding leaves of a client's load is made up per pod, in its rate or
// threads. Load per server pod, and so latency, stays what it was. It returns what
// changed, one line each.
func Scale(sc *scenario.Scenario, f float64) []string {
	var changes []string
	count := func(path string, n *int) float64 {
		want := float64(*n) * f
		got := max(1, int(math.Round(want)))
		if got != *n {
			changes = append(changes, fmt.Sprintf("%s %d → %d", path, *n, got))
		}
		*n = got
		return want / float64(got) // what the rounding left over
	}
	spec := &sc.Spec
	for i := range spec.Cluster.Nodes {
		count(fmt.Sprintf("spec.cluster.nodes[%d].count", i), &spec.Cluster.Nodes[i].Count)
	}
	for i := range spec.Services {
		s := &spec.Services[i]
		count(fmt.Sprintf("spec.services[%d].replicas", i), &s.Replicas)
		if a := s.Autoscaler; a != nil {
			mx := int(a.MaxReplicas)
			count(fmt.Sprintf("spec.services[%d].autoscaler.maxReplicas", i), &mx)
			a.MaxReplicas = int32(mx)
			if a.MinReplicas != nil {
				mn := int(*a.MinReplicas)
				count(fmt.Sprintf("spec.services[%d].autoscaler.minReplicas", i), &mn)
				*a.MinReplicas = int32(mn)
			}
		}
	}
	for i := range spec.Clients {
		c := &spec.Clients[i]
		path := fmt.Sprintf("spec.clients[%d]", i)
		residual := count(path+".replicas", &c.Replicas)
		if residual == 1 {
			continue
		}
		scaleRate := func(p string, r *scenario.Rate) {
			if r != nil {
				old := r.PerSecond
				r.PerSecond *= residual
				changes = append(changes, fmt.Sprintf("%s %s/s → %s/s", p, num(old), num(math.Round(r.PerSecond*1000)/1000)))
			}
		}
		scaleThreads := func(p string, n *int) {
			if *n > 0 {
				got := max(1, int(math.Round(float64(*n)*residual)))
				if got != *n {
					changes = append(changes, fmt.Sprintf("%s %d → %d", p, *n, got))
				}
				*n = got
			}
		}
		scaleRate(path+".rate", c.Rate)
		scaleThreads(path+".threads", &c.Threads)
		if rc := c.RateCurve; rc != nil {
			for j := range rc.Points {
				scaleRate(fmt.Sprintf("%s.rateCurve.points[%d].rate", path, j), rc.Points[j].Rate)
			}
			if rc.Diurnal != nil {
				scaleRate(path+".rateCurve.diurnal.min", rc.Diurnal.Min)
				scaleRate(path+".rateCurve.diurnal.max", rc.Diurnal.Max)
			}
		}
		for j := range c.Phases {
			p := &c.Phases[j]
			pp := fmt.Sprintf("%s.phases[%d]", path, j)
			scaleRate(pp+".rate", p.Rate)
			scaleRate(pp+".rampTo", p.RampTo)
			scaleThreads(pp+".threads", &p.Threads)
		}
	}
	return changes
}
