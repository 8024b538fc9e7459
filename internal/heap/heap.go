// Package heap is the min-heap of small values that the event kernel (sim), a node's
// CPU (model/node) and emulate's packet delayer (emulate/delay) share.
//
// Items are ordered by two keys of ordered types rather than by a less function or a
// Less method: the comparisons then compile to plain instructions, where a function
// value or a method of a type parameter is an indirect call per comparison (Go
// instantiates generics per GC shape and calls methods through a dictionary). On the
// kernel's event queue that indirection cost a third more per event.
package heap

import "cmp"

// Item is one value in a Heap and the keys it is ordered by: Key, then Tie among
// equal keys.
type Item[K, T cmp.Ordered, V any] struct {
	Key K
	Tie T
	Val V
}

// Heap is a min-heap of items by (Key, Tie). It is 4-ary: half the depth of a binary
// heap, and a node's four children share a cache line or two, which matters at
// millions of events a second. Items with equal keys and ties leave in no particular
// order; a caller that needs first-in first-out among equal keys passes a sequence
// number as the tie. The zero Heap is empty and ready to use.
type Heap[K, T cmp.Ordered, V any] struct {
	items []Item[K, T, V]
}

// Len is the number of items.
func (h *Heap[K, T, V]) Len() int { return len(h.items) }

// Min is the first item, which Pop would return; h must not be empty.
func (h *Heap[K, T, V]) Min() Item[K, T, V] { return h.items[0] }

func (a Item[K, T, V]) less(b Item[K, T, V]) bool {
	if a.Key != b.Key {
		return a.Key < b.Key
	}
	return a.Tie < b.Tie
}

// Push adds val with its keys.
func (h *Heap[K, T, V]) Push(key K, tie T, val V) {
	h.items = append(h.items, Item[K, T, V]{key, tie, val})
	s := h.items
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !s[i].less(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

// Pop removes and returns the first item; h must not be empty.
func (h *Heap[K, T, V]) Pop() Item[K, T, V] {
	s := h.items
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	h.items = s
	i := 0
	for {
		first := 4*i + 1
		if first >= len(s) {
			break
		}
		m := first
		end := min(first+4, len(s))
		for c := first + 1; c < end; c++ {
			if s[c].less(s[m]) {
				m = c
			}
		}
		if !s[m].less(s[i]) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	return top
}
