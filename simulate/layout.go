package simulate

import "trafficlab/placement"

// Layout is the placement the engine's run starts from, which emulate builds its
// cluster from: call it before Run (after, it lists every pod the run made).
func (e *Engine) Layout() *placement.Layout {
	l := &placement.Layout{}
	for i := range e.nodes {
		l.Nodes = append(l.Nodes, e.nodes[i].name)
	}
	for i := range e.pods {
		p := &e.pods[i]
		l.Pods = append(l.Pods, placement.PlacedPod{Name: p.name, Owner: e.services[p.svc].name, Node: l.Nodes[p.node], Index: int(p.svc)})
	}
	for i := range e.cpods {
		c := &e.cpods[i]
		if c.from >= 0 {
			continue // a service pod's callers: the pod itself is placed
		}
		spec := e.deps[c.dep].spec
		l.Clients = append(l.Clients, placement.PlacedPod{Name: c.name, Owner: spec.Name, Node: l.Nodes[c.node], Index: int(c.dep)})
	}
	for i, w := range e.backgrounds.All() {
		l.Background = append(l.Background, placement.PlacedPod{Name: w.Spec.Name, Owner: w.Spec.Name, Node: l.Nodes[w.Node], Index: i})
	}
	for _, pp := range e.life.Pending() {
		l.Pending = append(l.Pending, pp.Name)
	}
	return l
}
