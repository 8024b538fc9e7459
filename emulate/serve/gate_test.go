package serve

import (
	"testing"
	"time"
)

// The freed worker goes to the request that waited longest, and a request arriving
// as it is freed does not take it first (simulate/server.go finish pops the queue).
func TestGateFIFO(t *testing.T) {
	g := gate{n: 1}
	stop := make(chan struct{})
	if !g.acquire(nil, stop) {
		t.Fatal("first acquire failed")
	}
	order := make(chan int, 3)
	for i := range 3 {
		go func() {
			if g.acquire(nil, stop) {
				order <- i
				g.release()
			}
		}()
		waitFor(t, func() bool { _, w := g.load(); return w == i+1 })
	}
	g.release()
	for want := range 3 {
		select {
		case got := <-order:
			if got != want {
				t.Fatalf("waiter %d served in place %d", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no waiter served")
		}
	}
	waitFor(t, func() bool { b, w := g.load(); return b == 0 && w == 0 })
}

// Stopping abandons the waiters and leaves the count consistent.
func TestGateStop(t *testing.T) {
	g := gate{n: 1}
	stop := make(chan struct{})
	g.acquire(nil, stop)
	got := make(chan bool)
	go func() { got <- g.acquire(nil, stop) }()
	waitFor(t, func() bool { _, w := g.load(); return w == 1 })
	close(stop)
	if <-got {
		t.Fatal("acquire succeeded after stop")
	}
	g.release()
	if b, w := g.load(); b != 0 || w != 0 {
		t.Fatalf("busy %d waiting %d after stop and release, want 0 0", b, w)
	}
}

func TestGateUnbounded(t *testing.T) {
	g := gate{}
	for range 100 {
		if !g.acquire(nil, nil) {
			t.Fatal("unbounded gate refused")
		}
	}
	if b, w := g.load(); b != 100 || w != 0 {
		t.Fatalf("busy %d waiting %d, want 100 0", b, w)
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 5s")
		}
	}
}
