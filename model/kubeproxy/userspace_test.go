package kubeproxy

import (
	"slices"
	"testing"
)

// A changed endpoint set is stored as ShuffleStrings stores it (shuffled[perm[i]] = eps[i]
// with the node's rand.Perm) and served round robin from index 0.
func TestUserspaceRoundRobin(t *testing.T) {
	eps := []Endpoint{10, 11, 12, 13}
	b := mustNew(t, "userspace", "", newRNG(9))
	b.SetEndpoints(eps)

	order := make([]Endpoint, len(eps))
	for i, j := range newRNG(9).Perm(len(eps)) {
		order[j] = eps[i]
	}
	want := append(slices.Clone(order), order...)
	if got := picks(b, 2*len(eps)); !slices.Equal(got, want) {
		t.Fatalf("picks %v, want %v", got, want)
	}

	// The same set in another order changes nothing: the rotation goes on where it was.
	b.Pick(0)
	b.SetEndpoints([]Endpoint{13, 12, 11, 10})
	if got, _ := b.Pick(0); got != order[1] {
		t.Errorf("after resending the same set picked %d, want %d (index kept)", got, order[1])
	}

	// A new set restarts the rotation at index 0 of a fresh shuffle.
	twin := newRNG(9)
	twin.Perm(len(eps)) // the stream as b consumed it so far
	next := []Endpoint{10, 11, 12}
	b.SetEndpoints(next)
	order = make([]Endpoint, len(next))
	for i, j := range twin.Perm(len(next)) {
		order[j] = next[i]
	}
	if got := picks(b, 4); !slices.Equal(got, append(order, order[0])) {
		t.Errorf("after a change picked %v, want %v", got, append(order, order[0]))
	}
}
