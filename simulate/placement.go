package simulate

// placement chooses nodes for pods the way the default scheduler spreads a Deployment:
// among the nodes that fit, the one with the fewest pods of the same Deployment (the
// default PodTopologySpread constraint on kubernetes.io/hostname, pkg/scheduler/apis/
// config/v1/default_plugins.go and framework/plugins/podtopologyspread), then the one
// with the least CPU requested (NodeResourcesFit's LeastAllocated score,
// framework/plugins/noderesources/least_allocated.go), then the first in node order.
// It knows nothing of capacity yet: every node fits.
type placement struct {
	requested []float64        // CPU cores requested per node
	perOwner  map[string][]int // pods per node, per Deployment
}

func newPlacement(nodes int) *placement {
	return &placement{requested: make([]float64, nodes), perOwner: map[string][]int{}}
}

// place returns the node for one pod of owner requesting cpu cores.
func (p *placement) place(owner string, cpu float64) int {
	count := p.perOwner[owner]
	if count == nil {
		count = make([]int, len(p.requested))
		p.perOwner[owner] = count
	}
	best := 0
	for n := 1; n < len(p.requested); n++ {
		if count[n] < count[best] || (count[n] == count[best] && p.requested[n] < p.requested[best]) {
			best = n
		}
	}
	count[best]++
	p.requested[best] += cpu
	return best
}

// remove frees a deleted pod's place, so the next pod of owner can take it.
func (p *placement) remove(owner string, node int, cpu float64) {
	p.perOwner[owner][node]--
	p.requested[node] -= cpu
}
