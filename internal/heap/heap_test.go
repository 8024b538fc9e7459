package heap

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

type item = Item[float64, int, string]

func byKeyThenTie(a, b item) int {
	if c := cmp.Compare(a.Key, b.Key); c != 0 {
		return c
	}
	return cmp.Compare(a.Tie, b.Tie)
}

// randomItems are n items with keys among distinct values (few means many ties) and
// ties numbered in insertion order, as the kernel numbers its events.
func randomItems(seed uint64, n, distinct int) []item {
	rng := rand.New(rand.NewPCG(seed, 0))
	items := make([]item, n)
	for i := range items {
		items[i] = item{Key: float64(rng.IntN(distinct)), Tie: i, Val: string(rune('a' + i%26))}
	}
	return items
}

func TestPopsInKeyThenTieOrder(t *testing.T) {
	for _, c := range []struct {
		name  string
		items []item
	}{
		{"one", []item{{1, 0, "a"}}},
		{"ascending", []item{{1, 0, "a"}, {2, 1, "b"}, {3, 2, "c"}, {4, 3, "d"}, {5, 4, "e"}, {6, 5, "f"}}},
		{"descending", []item{{6, 0, "a"}, {5, 1, "b"}, {4, 2, "c"}, {3, 3, "d"}, {2, 4, "e"}, {1, 5, "f"}}},
		{"ties leave in tie order, not push order", []item{{1, 3, "a"}, {1, 1, "b"}, {0, 9, "c"}, {1, 2, "d"}, {1, 0, "e"}}},
		{"negative and infinite keys", []item{{math.Inf(1), 0, "a"}, {-1, 1, "b"}, {math.Inf(-1), 2, "c"}, {0, 3, "d"}, {-0.5, 4, "e"}}},
		// Sizes around whole levels of a 4-ary heap (1, 5, 21, 85 items), where the
		// last parent has from one to four children.
		{"20 equal keys in insertion order", randomItems(1, 20, 1)},
		{"21 items, many ties", randomItems(2, 21, 3)},
		{"22 items", randomItems(3, 22, 100)},
		{"85 items", randomItems(4, 85, 10)},
		{"10000 items, many ties", randomItems(5, 10000, 50)},
		{"10000 items, few ties", randomItems(6, 10000, 1<<30)},
	} {
		t.Run(c.name, func(t *testing.T) {
			var h Heap[float64, int, string]
			for _, it := range c.items {
				h.Push(it.Key, it.Tie, it.Val)
			}
			want := slices.SortedFunc(slices.Values(c.items), byKeyThenTie)
			for i, w := range want {
				if len(h) != len(want)-i {
					t.Fatalf("len %d after %d pops of %d", len(h), i, len(want))
				}
				if m := h[0]; m != w {
					t.Fatalf("h[0] before pop %d: %v, want %v", i, m, w)
				}
				if got := h.Pop(); got != w {
					t.Fatalf("pop %d: %v, want %v", i, got, w)
				}
			}
			if len(h) != 0 {
				t.Fatalf("%d left", len(h))
			}
		})
	}
}

// Pushes and pops interleaved, as the kernel does, against a sorted slice.
func TestInterleavedAgainstSort(t *testing.T) {
	for _, c := range []struct {
		name     string
		seed     uint64
		distinct int
		pushOdds float64 // chance that a step pushes rather than pops
	}{
		{"growing, many ties", 1, 5, 0.7},
		{"steady, few ties", 2, 1 << 20, 0.5},
		{"shrinking", 3, 100, 0.3},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(c.seed, 1))
			var h Heap[float64, int, string]
			var sorted []item
			for step := range 20000 {
				if len(sorted) == 0 || rng.Float64() < c.pushOdds {
					it := item{Key: float64(rng.IntN(c.distinct)), Tie: step}
					h.Push(it.Key, it.Tie, it.Val)
					i, _ := slices.BinarySearchFunc(sorted, it, byKeyThenTie)
					sorted = slices.Insert(sorted, i, it)
					continue
				}
				if got := h.Pop(); got != sorted[0] {
					t.Fatalf("step %d: pop %v, want %v", step, got, sorted[0])
				}
				sorted = sorted[1:]
				if len(h) != len(sorted) {
					t.Fatalf("step %d: len %d, want %d", step, len(h), len(sorted))
				}
			}
		})
	}
}
