package simulate

import (
	"testing"

	"trafficlab/examples"
	"trafficlab/placement"
	"trafficlab/scenario"
)

// The layout emulate builds is the one a run starts from: every service pod of the
// run's start on the node the run reports, and the clients' pods in order.
func TestLayoutIsTheRunsStart(t *testing.T) {
	for _, name := range []string{"r3-noisy-neighbour.yaml", "r2-ab-pods-on-3-nodes.yaml", "r1-7-callers-3-threads.yaml"} {
		data, err := examples.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		sc, _, diags := scenario.Load(name, data, []string{"spec.duration=1s"})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		e, err := New(sc)
		if err != nil {
			t.Fatal(err)
		}
		l := e.Layout()
		r := runExample(t, name, "spec.duration=1s").Result()
		var want []placement.PlacedPod
		for _, p := range r.Pods {
			if p.StartS == 0 {
				want = append(want, placement.PlacedPod{Name: p.Name, Owner: p.Service, Node: p.Node})
			}
		}
		if len(l.Pods) != len(want) {
			t.Fatalf("%s: layout has %d pods, the run started with %d", name, len(l.Pods), len(want))
		}
		for i, p := range l.Pods {
			p.Index = 0
			if p != want[i] {
				t.Errorf("%s: pod %d is %+v in the layout, %+v in the run", name, i, p, want[i])
			}
		}
		clients := 0
		for _, c := range r.Clients {
			clients += c.Replicas
		}
		if len(l.Clients) != clients || len(l.Nodes) != len(r.Nodes) {
			t.Errorf("%s: %d client pods on %d nodes, the run has %d on %d", name, len(l.Clients), len(l.Nodes), clients, len(r.Nodes))
		}
	}
}
