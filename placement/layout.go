package placement

// Layout is where a scenario's pods are at the start of a run: the nodes in order,
// the service pods placed on them and the client pods. simulate's Engine.Layout
// makes it; emulate builds its cluster from it, so both engines start from the same
// placement (the same scheduler, the same seed, the same order of binding).
type Layout struct {
	Nodes   []string
	Pods    []PlacedPod
	Clients []PlacedPod
	// Background are the background workloads' pods, Owner and Name the workload's
	// name, Index its index in spec.background.
	Background []PlacedPod
	// Pending are service pods no node could take at the start.
	Pending []string
}

// PlacedPod is one pod and its node. Owner is its service or client Deployment;
// Index that Deployment's index in spec.services or spec.clients.
type PlacedPod struct {
	Name, Owner, Node string
	Index             int
}
