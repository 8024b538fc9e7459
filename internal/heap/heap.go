// Package heap is the min-heap of small values that the event kernel (sim), a node's
// CPU (model/node) and emulate's packet delayer (emulate/delay) share.
//
// Items are ordered by two keys of ordered types rather than by a less function or a
// Less method: the comparisons then compile to plain instructions, where a function
// value or a method of a type parameter is an indirect call per comparison (Go
// instantiates generics per GC shape and calls methods through a dictionary). Either
// made a push and pop of the kernel's events a third slower than written out by hand;
// ordered keys cost nothing measurable.
package heap

import "cmp"

// Item is one value in a Heap and the keys it is ordered by: Key, then Tie among
// equal keys.
type Item[K, T cmp.Ordered, V any] struct {
	Key K
	Tie T
	Val V
}

// Heap is a min-heap of items by (Key, Tie): len(h) is its size and h[0] its first
// item; it changes only through Push and Pop. It is 4-ary: half the depth of a binary
// heap, and a node's four children share a cache line or two, which matters at
// millions of events a second. Items with equal keys and ties leave in no particular
// order; a caller that needs first-in first-out among equal keys passes a sequence
// number as the tie. The nil Heap is empty and ready to use.
type Heap[K, T cmp.Ordered, V any] []Item[K, T, V]

// less compares s[i] and s[j] in place: copying the items out would load each tie
// before knowing it is needed.
func less[K, T cmp.Ordered, V any](s []Item[K, T, V], i, j int) bool {
	if s[i].Key != s[j].Key {
		return s[i].Key < s[j].Key
	}
	return s[i].Tie < s[j].Tie
}

// Push adds val with its keys.
func (h *Heap[K, T, V]) Push(key K, tie T, val V) {
	*h = append(*h, Item[K, T, V]{key, tie, val})
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !less(s, i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

// Pop removes and returns the first item; h must not be empty.
func (h *Heap[K, T, V]) Pop() Item[K, T, V] {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	*h = s
	i := 0
	for {
		first := 4*i + 1
		if first >= len(s) {
			break
		}
		m := first
		end := min(first+4, len(s))
		for c := first + 1; c < end; c++ {
			if less(s, c, m) {
				m = c
			}
		}
		if !less(s, m, i) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	return top
}
