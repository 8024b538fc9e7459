package mesh

import (
	"fmt"

	"trafficlab/model/sidecar"
	"trafficlab/result"
	"trafficlab/sim"
)

// Result is every envoy's figures, in the order they were added: end is when the
// run ends, podEnded when an inbound envoy's pod ended (-1: it runs), nodeName the
// name of a node.
func (m *Mesh) Result(end sim.Time, podEnded func(pod int32) sim.Time, nodeName func(n int32) string) []result.Sidecar {
	var out []result.Sidecar
	for i := range m.envoys {
		x := &m.envoys[i]
		until := end
		if x.inbound && podEnded(x.owner) >= 0 {
			until = podEnded(x.owner)
		}
		r := m.envoyResult(x, until)
		r.Node = nodeName(x.node)
		out = append(out, r)
	}
	return out
}

func (m *Mesh) envoyResult(x *envoy, end sim.Time) result.Sidecar {
	life := (end - x.created).Seconds()
	busy := sim.Time(0)
	now := m.k.Now()
	for _, w := range x.workers {
		busy += w.busyNs
		if w.busy {
			busy += now - w.since
		}
	}
	r := result.Sidecar{
		Pod: x.name, Direction: result.SidecarOutbound, Workers: len(x.workers), CPULimit: x.limit,
		Requests: x.requests, Retries: x.retries, Overflows: x.overflows, HTTP503: x.unavailable,
	}
	switch {
	case x.calls:
		r.Direction = result.SidecarBoth
	case x.inbound:
		r.Direction = result.SidecarInbound
	}
	if life > 0 {
		r.WorkerUtilization = result.Round(busy.Seconds()/(life*float64(len(x.workers))), 4)
		used := x.grp.Used(now)
		r.CPUCores = result.Round(used/life, 4)
		if c := x.grp.Capacity(); c > 0 {
			r.CPUUtilization = result.Round(used/(c*life), 4)
		}
	}
	return r
}

// AddCPUUsed adds each envoy's core-seconds used by now to its node's in used.
func (m *Mesh) AddCPUUsed(now sim.Time, used []float64) {
	for i := range m.envoys {
		used[m.envoys[i].node] += m.envoys[i].grp.Used(now)
	}
}

// Audit checks the envoys' books: each one's Connections circuit breaker counts
// exactly the upstream connections its pools hold. It is exported for the engine's
// tests, which run it under chaos: only a whole run makes enough of it.
func (m *Mesh) Audit() error {
	for i := range m.envoys {
		x := &m.envoys[i]
		open := 0
		for _, wk := range x.workers {
			for _, pi := range wk.pools {
				open += m.pool(pi).Open()
			}
		}
		got := x.breaker.Open(sidecar.Connections)
		for _, b := range x.breakers {
			got += b.Open(sidecar.Connections)
		}
		if int(got) != open {
			return fmt.Errorf("%s: breaker counts %d connections, pools hold %d", x.name, got, open)
		}
	}
	return nil
}
