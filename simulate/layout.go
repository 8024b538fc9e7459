package simulate

import "trafficlab/scenario"

// Layout is where a scenario's pods are at the start of a run: the nodes in order,
// the service pods placed on them and the client pods. emulate builds its cluster
// from it, so both engines start from the same placement (the same scheduler, the
// same seed, the same order of binding).
type Layout struct {
	Nodes   []string
	Pods    []PlacedPod
	Clients []PlacedPod
	// Pending are service pods no node could take at the start.
	Pending []string
}

// PlacedPod is one pod and its node. Owner is its service or client Deployment;
// Index that Deployment's index in spec.services or spec.clients.
type PlacedPod struct {
	Name, Owner, Node string
	Index             int
}

// InitialLayout places the pods of sc as a simulation of it starts, without running it.
func InitialLayout(sc *scenario.Scenario) (*Layout, error) {
	e, err := New(sc)
	if err != nil {
		return nil, err
	}
	l := &Layout{}
	for i := range e.nodes {
		l.Nodes = append(l.Nodes, e.nodes[i].name)
	}
	for i := range e.pods {
		p := &e.pods[i]
		l.Pods = append(l.Pods, PlacedPod{Name: p.name, Owner: e.services[p.svc].name, Node: l.Nodes[p.node], Index: int(p.svc)})
	}
	for i := range e.cpods {
		c := &e.cpods[i]
		spec := e.deps[c.dep].spec
		l.Clients = append(l.Clients, PlacedPod{Name: c.name, Owner: spec.Name, Node: l.Nodes[c.node], Index: int(c.dep)})
	}
	for i := range e.pending {
		l.Pending = append(l.Pending, e.pending[i].name)
	}
	return l, nil
}
