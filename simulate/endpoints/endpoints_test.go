package endpoints

import (
	"slices"
	"testing"
	"time"

	"trafficlab/model/kubeproxy"
	"trafficlab/sim"
)

// pods is a Source whose Service 0 lists what the test sets.
type pods struct{ usable []kubeproxy.Endpoint }

func (p *pods) Usable(int32) []kubeproxy.Endpoint { return slices.Clone(p.usable) }

// Ready is what the test sets too: the test's pods are ready or gone.
func (p *pods) Ready(int32) []kubeproxy.Endpoint { return slices.Clone(p.usable) }

const ms = sim.Time(time.Millisecond)

// TestChangesReachEachNodeAfterTheDelayAndTheRateLimit follows three endpoint
// removals to two nodes' rules: each lands 100 ms after it is made (the
// propagation latency, no jitter); the first two syncs spend the burst of 2
// tokens, and the third waits for the bucket: minSyncPeriod (1 s) after the last
// sync ran.
func TestChangesReachEachNodeAfterTheDelayAndTheRateLimit(t *testing.T) {
	k := sim.New()
	src := &pods{usable: []kubeproxy.Endpoint{0, 1, 2, 3}}
	r := New(k, Config{Mode: kubeproxy.Iptables, MinSyncPeriod: time.Second, Latency: 100 * ms, Seed: 1,
		Nodes: []string{"a", "b"}}, src)
	r.Start([]string{"web"}, []bool{false})
	b := r.Balancer(1, 0)
	remove := func(at sim.Time, ep kubeproxy.Endpoint) {
		k.Run(at)
		src.usable = slices.DeleteFunc(src.usable, func(x kubeproxy.Endpoint) bool { return x == ep })
		r.Changed(0)
		r.Changed(0) // a second note in the same instant makes no second version
	}
	steps := []struct {
		at   sim.Time
		want []kubeproxy.Endpoint // both nodes' rules just before at
	}{
		{100 * ms, []kubeproxy.Endpoint{0, 1, 2, 3}},
		{100*ms + 1, []kubeproxy.Endpoint{1, 2, 3}},
		{300 * ms, []kubeproxy.Endpoint{1, 2, 3}},
		{300*ms + 1, []kubeproxy.Endpoint{2, 3}},
		// The third change lands at 500 ms, with no token: it waits for 1.3 s.
		{1300 * ms, []kubeproxy.Endpoint{2, 3}},
		{1300*ms + 1, []kubeproxy.Endpoint{3}},
	}
	remove(0, 0)
	for i, st := range steps {
		k.Run(st.at)
		for n := int32(0); n < 2; n++ {
			if got := r.Programmed(n, 0); !slices.Equal(got, st.want) {
				t.Errorf("step %d at %v: node %d programs %v, want %v", i, time.Duration(st.at), n, got, st.want)
			}
		}
		switch i {
		case 1:
			remove(200*ms, 1)
		case 3:
			remove(400*ms, 2)
		}
	}
	// The balancer made before the changes now picks the one endpoint left.
	if ep, ok := b.Pick(7); !ok || ep != 3 {
		t.Errorf("balancer picks %v (%v), want 3", ep, ok)
	}
	// Conditions that move without changing the list publish no version.
	r.Changed(0)
	k.Run(5000 * ms)
	if got := r.services[0].version; got != 4 {
		t.Errorf("%d versions, want 4", got)
	}
}

// TestHeadlessChangesReachDNSNotKubeProxy: a headless Service's slice changes reach
// DNS's answer after the propagation delay, with no sync rate limit, and no node's
// kube-proxy syncs for them.
func TestHeadlessChangesReachDNSNotKubeProxy(t *testing.T) {
	k := sim.New()
	src := &pods{usable: []kubeproxy.Endpoint{0, 1, 2}}
	r := New(k, Config{Mode: kubeproxy.Iptables, MinSyncPeriod: time.Second, Latency: 100 * ms, Seed: 1,
		Nodes: []string{"a"}}, src)
	r.Start([]string{"db"}, []bool{true})
	for i, ep := range []kubeproxy.Endpoint{0, 1} {
		k.Run(sim.Time(i) * 10 * ms)
		src.usable = slices.DeleteFunc(src.usable, func(x kubeproxy.Endpoint) bool { return x == ep })
		r.Changed(0)
	}
	steps := []struct {
		at   sim.Time
		want []kubeproxy.Endpoint
	}{
		{100 * ms, []kubeproxy.Endpoint{0, 1, 2}},
		{100*ms + 1, []kubeproxy.Endpoint{1, 2}},
		{110 * ms, []kubeproxy.Endpoint{1, 2}},
		{110*ms + 1, []kubeproxy.Endpoint{2}},
	}
	for _, st := range steps {
		k.Run(st.at)
		if got := r.Answer(0); !slices.Equal(got, st.want) {
			t.Errorf("at %v DNS answers %v, want %v", time.Duration(st.at), got, st.want)
		}
	}
	if n := len(r.services[0].history); n != 1 {
		t.Errorf("%d versions kept once DNS has the last, want 1", n)
	}
	if r.proxies[0].syncPending || r.views[0].delivered != 1 {
		t.Errorf("kube-proxy heard of a headless Service's slice: view %+v", r.views[0])
	}
}
