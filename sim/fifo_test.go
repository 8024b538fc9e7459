package sim

import "testing"

func TestFIFOKeepsOrderAndBoundedMemory(t *testing.T) {
	var q FIFO[int]
	next, want := 0, 0
	// Keep between 3 and 5 items queued for 10,000 rounds: order holds and the
	// buffer never grows past its first size.
	for round := 0; round < 10000; round++ {
		for q.Len() < 5 {
			q.Push(next)
			next++
		}
		for q.Len() > 3 {
			x, ok := q.Pop()
			if !ok || x != want {
				t.Fatalf("popped %d (ok=%v), want %d", x, ok, want)
			}
			want++
		}
	}
	if len(q.buf) != 8 {
		t.Fatalf("buffer grew to %d slots for at most 5 items", len(q.buf))
	}
	for q.Len() > 0 {
		q.Pop()
	}
	if _, ok := q.Pop(); ok {
		t.Fatal("pop from an empty queue must report !ok")
	}
}
