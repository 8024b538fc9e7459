package resolver

import (
	"slices"
	"testing"
	"time"

	"trafficlab/model/dns"
	"trafficlab/model/kubeproxy"
	"trafficlab/sim"
)

// dnsServer answers with the pods the test sets.
type dnsServer struct{ pods []kubeproxy.Endpoint }

func (d *dnsServer) Answer(int32) []kubeproxy.Endpoint { return d.pods }

const sec = sim.Time(time.Second)

// A channel resolves on first use and again only after it loses a connection: at
// once when its last resolution is Every old, else put off until then (grpc-go) or
// not at all (grpc-java); its owner hears of each new list.
func TestChannelResolvesAgainOnlyAfterALoss(t *testing.T) {
	for _, tc := range []struct {
		name    string
		refresh dns.Refresh
		losses  []sim.Time
		want    []sim.Time // when the owner heard of new addresses
	}{
		{"grpc-go puts an early loss off to 30 s", dns.Refresh{Every: 30 * sec}, []sim.Time{10 * sec, 12 * sec, 50 * sec}, []sim.Time{30 * sec, 60 * sec}},
		{"grpc-java drops an early loss", dns.Refresh{Every: 30 * sec, SkipsEarly: true}, []sim.Time{10 * sec, 12 * sec, 50 * sec}, []sim.Time{50 * sec}},
		{"a loss after 30 s resolves at once", dns.Refresh{Every: 30 * sec}, []sim.Time{45 * sec}, []sim.Time{45 * sec}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := sim.New()
			src := &dnsServer{pods: []kubeproxy.Endpoint{0, 1, 2}}
			var heard []sim.Time
			r := New(k, src, 1, func(ID) { heard = append(heard, k.Now()) })
			id := r.Add("client-0", 0, Spec{Refresh: tc.refresh, Channel: true})
			if got := r.Addresses(id); len(got) != 3 {
				t.Fatalf("first use resolved %v, want the 3 pods", got)
			}
			for i, at := range tc.losses {
				k.Run(at)
				// Each answer lists one more pod, so every resolution is news.
				src.pods = append(src.pods, kubeproxy.Endpoint(3+i))
				r.Lost(id)
			}
			k.Run(1000 * sec)
			if !slices.Equal(heard, tc.want) {
				t.Errorf("new addresses at %v, want %v", heard, tc.want)
			}
		})
	}
}

// An HTTP library's lookups follow its cache: every new connection of a library
// without one gets a freshly shuffled answer; Java's keeps one order for 30 s.
func TestDialFollowsTheLibrarysCache(t *testing.T) {
	k := sim.New()
	src := &dnsServer{pods: []kubeproxy.Endpoint{0, 1, 2, 3, 4}}
	r := New(k, src, 1, func(ID) {})
	fresh := r.Add("go-0", 0, Spec{})
	java := r.Add("java-0", 0, Spec{Cache: dns.Cache{TTL: 30 * sec}})
	firsts := map[ID]map[int32]bool{fresh: {}, java: {}}
	for i := range 100 {
		k.Run(sim.Time(i) * sec / 10)
		for id := range firsts {
			firsts[id][r.Dial(id)[0]] = true
		}
	}
	// 100 uniform picks over 5 pods miss one with probability 5·0.8^100 ≈ 1e-9.
	if len(firsts[fresh]) != 5 {
		t.Errorf("lookups per connection reached pods %v, want all 5", firsts[fresh])
	}
	if len(firsts[java]) != 1 {
		t.Errorf("a 30 s cache over 10 s sent new connections to pods %v, want one", firsts[java])
	}
	src.pods = nil
	k.Run(100 * sec)
	if got := r.Dial(fresh); len(got) != 0 {
		t.Errorf("no ready pod resolved to %v, want NXDOMAIN", got)
	}
}
