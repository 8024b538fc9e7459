package kubeproxy

import (
	"slices"
	"testing"
)

// addOneByOne brings endpoints up one sync at a time, so the kernel list order is known:
// each new real server is linked at the head, giving the reverse of eps.
func addOneByOne(b Balancer, eps ...Endpoint) {
	for i := range eps {
		b.SetEndpoints(eps[:i+1])
	}
}

func listOrder(b Balancer) []Endpoint {
	var out []Endpoint
	for _, d := range b.(*ipvsBalancer).dests {
		out = append(out, d.ep)
	}
	return out
}

func TestIPVSListOrderIsNewestFirst(t *testing.T) {
	b := mustNew(t, "ipvs", "rr", newRNG(1))
	addOneByOne(b, 1, 2, 3)
	if got := listOrder(b); !slices.Equal(got, []Endpoint{3, 2, 1}) {
		t.Errorf("list %v, want [3 2 1]", got)
	}
	// Several endpoints added in one sync land in some order, all ahead of the old ones.
	b.SetEndpoints([]Endpoint{1, 2, 3, 4, 5, 6})
	got := listOrder(b)
	if !slices.Equal(got[3:], []Endpoint{3, 2, 1}) || !slices.Equal(slices.Sorted(slices.Values(got[:3])), []Endpoint{4, 5, 6}) {
		t.Errorf("list %v, want 4, 5, 6 in some order, then [3 2 1]", got)
	}
}

// ip_vs_rr_schedule resumes after the dest chosen last and wraps past the list head.
func TestIPVSRoundRobin(t *testing.T) {
	t.Run("exact sequence", func(t *testing.T) {
		b := mustNew(t, "ipvs", "rr", newRNG(1))
		addOneByOne(b, 1, 2, 3)
		if got := picks(b, 7); !slices.Equal(got, []Endpoint{3, 2, 1, 3, 2, 1, 3}) {
			t.Errorf("picks %v", got)
		}
	})
	t.Run("a new dest joins at the head, the cursor stays", func(t *testing.T) {
		b := mustNew(t, "ipvs", "rr", newRNG(1))
		addOneByOne(b, 1, 2, 3)
		picks(b, 1) // 3
		b.SetEndpoints([]Endpoint{1, 2, 3, 4})
		if got := picks(b, 4); !slices.Equal(got, []Endpoint{2, 1, 4, 3}) {
			t.Errorf("picks %v, want [2 1 4 3]", got)
		}
	})
	t.Run("deleting the cursor's dest resumes at its successor", func(t *testing.T) {
		b := mustNew(t, "ipvs", "rr", newRNG(1))
		addOneByOne(b, 1, 2, 3)
		picks(b, 2) // 3, 2
		b.SetEndpoints([]Endpoint{1, 3})
		if got := picks(b, 3); !slices.Equal(got, []Endpoint{1, 3, 1}) {
			t.Errorf("picks %v, want [1 3 1]", got)
		}
	})
	t.Run("deleting the first dest under the cursor", func(t *testing.T) {
		b := mustNew(t, "ipvs", "rr", newRNG(1))
		addOneByOne(b, 1, 2, 3)
		picks(b, 1) // 3: the cursor is on the first dest; deleting it puts the cursor on the head
		b.SetEndpoints([]Endpoint{1, 2})
		if got := picks(b, 3); !slices.Equal(got, []Endpoint{2, 1, 2}) {
			t.Errorf("picks %v, want [2 1 2]", got)
		}
	})
	t.Run("a quiesced dest is skipped until its last connection closes", func(t *testing.T) {
		b := mustNew(t, "ipvs", "rr", newRNG(1))
		addOneByOne(b, 1, 2, 3)
		b.Connected(2)
		b.SetEndpoints([]Endpoint{1, 3})
		if got := picks(b, 3); !slices.Equal(got, []Endpoint{3, 1, 3}) {
			t.Errorf("picks %v, want [3 1 3]", got)
		}
		if got := listOrder(b); !slices.Equal(got, []Endpoint{3, 2, 1}) {
			t.Errorf("list %v, want 2 kept while it has a connection", got)
		}
		b.Disconnected(2)
		if got := listOrder(b); !slices.Equal(got, []Endpoint{3, 1}) {
			t.Errorf("list %v, want 2 deleted once drained", got)
		}
		if got := picks(b, 2); !slices.Equal(got, []Endpoint{1, 3}) {
			t.Errorf("picks %v, want [1 3]", got)
		}
	})
}

// A quiesced endpoint that becomes ready again is deleted and re-added: it moves to the head
// and keeps its connection count (the kernel reuses the dest from its trash).
func TestIPVSReaddedEndpointKeepsItsConnections(t *testing.T) {
	b := mustNew(t, "ipvs", "lc", newRNG(1))
	addOneByOne(b, 1, 2, 3)
	b.Connected(2)
	b.Connected(2)
	b.SetEndpoints([]Endpoint{1, 3})
	b.SetEndpoints([]Endpoint{1, 2, 3})
	if got := listOrder(b); !slices.Equal(got, []Endpoint{2, 3, 1}) {
		t.Errorf("list %v, want [2 3 1]", got)
	}
	if got, _ := b.Pick(0); got != 3 {
		t.Errorf("lc picked %d, want 3 (2 still has 2 connections)", got)
	}
}

// The list is [3 2 1] in every case; active gives each endpoint's open connections.
func TestIPVSLeastConnectionSchedulers(t *testing.T) {
	cases := []struct {
		name   string
		active map[Endpoint]int
		want   map[string]Endpoint // by scheduler
	}{
		{"all idle: the first in list order", nil,
			map[string]Endpoint{"lc": 3, "sed": 3, "nq": 3}},
		{"one busy", map[Endpoint]int{3: 1},
			map[string]Endpoint{"lc": 2, "sed": 2, "nq": 2}},
		// nq returns the first idle dest at once; lc and sed find it as the minimum.
		{"an idle dest behind busy ones", map[Endpoint]int{3: 4, 2: 0, 1: 0},
			map[string]Endpoint{"lc": 2, "sed": 2, "nq": 2}},
		// sed: (1+1)/1 < (3+1)/1 and (2+1)/1; lc: 1<<8 is the lowest overhead.
		{"sed overhead", map[Endpoint]int{3: 1, 2: 3, 1: 2},
			map[string]Endpoint{"lc": 3, "sed": 3, "nq": 3}},
		{"ties go to the first in list order", map[Endpoint]int{3: 2, 2: 1, 1: 1},
			map[string]Endpoint{"lc": 2, "sed": 2, "nq": 2}},
	}
	for _, c := range cases {
		for sched, want := range c.want {
			b := mustNew(t, "ipvs", sched, newRNG(1))
			addOneByOne(b, 1, 2, 3)
			for ep, n := range c.active {
				for range n {
					b.Connected(ep)
				}
			}
			if got, _ := b.Pick(0); got != want {
				t.Errorf("%s, %s: picked %d, want %d", c.name, sched, got, want)
			}
		}
	}
}

// With every new connection held open, lc deals one to each dest in turn; a dest whose
// connection closes is chosen next.
func TestIPVSLeastConnectionFollowsConnections(t *testing.T) {
	b := mustNew(t, "ipvs", "lc", newRNG(1))
	addOneByOne(b, 1, 2, 3)
	var got []Endpoint
	for range 4 {
		ep, _ := b.Pick(0)
		b.Connected(ep)
		got = append(got, ep)
	}
	if !slices.Equal(got, []Endpoint{3, 2, 1, 3}) {
		t.Errorf("picks %v, want [3 2 1 3]", got)
	}
	b.Disconnected(1)
	if ep, _ := b.Pick(0); ep != 1 {
		t.Errorf("after 1 closed a connection picked %d, want 1", ep)
	}
}

// hash_32(0x0A000001, 8): 0x0A000001 × 0x61C88647 = 0x27C88647 mod 2^32, top byte 0x27.
func TestIPVSSourceHashBucket(t *testing.T) {
	if got := shBucket(0x0A000001); got != 0x27 {
		t.Errorf("bucket of 10.0.0.1 is %d, want 39", got)
	}
	if shBucket(0x0A000001) != shBucket(0x0A000001^0x12345678<<32^0x12345678) {
		t.Error("a 64-bit key is not folded by XOR of its halves")
	}
}

func TestIPVSSourceHash(t *testing.T) {
	eps := []Endpoint{1, 2, 3, 4}
	b := mustNew(t, "ipvs", "sh", newRNG(1))
	addOneByOne(b, eps...) // list [4 3 2 1]
	list := listOrder(b)

	// Each source always lands on the dest of its bucket, bucket % 4 in list order.
	const sources = 1024
	counts := map[Endpoint]int{}
	for round := range 3 {
		for i := range uint64(sources) {
			src := 0x0A000000 + i
			got, ok := b.Pick(src)
			if want := list[shBucket(src)%4]; !ok || got != want {
				t.Fatalf("round %d, source %#x: picked %d, %v; want %d", round, src, got, ok, want)
			}
			if round == 0 {
				counts[got]++
			}
		}
	}
	// Different sources spread: treat the 1024 addresses as random keys, 3 degrees of freedom.
	var c []int
	for _, ep := range eps {
		c = append(c, counts[ep])
	}
	if x := chiSquare(c, sources); x > chiSquareCritical001[3] {
		t.Errorf("counts %v: chi-square %.2f > %.3f (df 3, p = 0.001)", c, x, chiSquareCritical001[3])
	}

	// A removed endpoint with a connection keeps its buckets with weight 0: its sources are
	// refused, every other source keeps its endpoint.
	src := uint64(0x0A000001) // bucket 39, 39 % 4 = 3: the last dest in the list, endpoint 1
	b.Connected(1)
	b.SetEndpoints([]Endpoint{2, 3, 4})
	if _, ok := b.Pick(src); ok {
		t.Error("a source hashed to a quiesced dest was not refused")
	}
	other := uint64(0x0A000000) // × 0x61C88647 = 0xC6000000: bucket 198, 198 % 4 = 2, endpoint 2
	if got, ok := b.Pick(other); !ok || got != 2 {
		t.Errorf("source %#x picked %d, %v; want 2", other, got, ok)
	}
	// Once drained it is deleted and the buckets are dealt over the three left.
	b.Disconnected(1)
	if got, ok := b.Pick(src); !ok || got != listOrder(b)[39%3] {
		t.Errorf("after the delete source %#x picked %d, %v; want %d", src, got, ok, listOrder(b)[39%3])
	}
}
