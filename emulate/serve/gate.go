package serve

import (
	"container/list"
	"sync"
)

// gate is the app's pool of worker threads: at most n requests in service, the others
// waiting in arrival order; n = 0 is unbounded. It mirrors the simulator's pod
// (simulate/server.go appArrive: a request queues when busy >= concurrency; finish:
// the freed worker takes the queue's head), so a slot passes straight from the
// request leaving to the one at the head, and no later arrival can take it first.
type gate struct {
	n    int
	mu   sync.Mutex
	busy int
	wait list.List // of *waiter, head first
}

type waiter struct {
	ready chan struct{} // closed when the waiter holds a worker
	conn  *conn         // where the request came from, for exit (Server.cut)
}

// acquire takes a worker for a request from c, waiting in line for one. It returns
// false, holding nothing, if stop closes first.
func (g *gate) acquire(c *conn, stop <-chan struct{}) bool {
	g.mu.Lock()
	if g.n == 0 || g.busy < g.n {
		g.busy++
		g.mu.Unlock()
		return true
	}
	w := &waiter{ready: make(chan struct{}), conn: c}
	e := g.wait.PushBack(w)
	g.mu.Unlock()
	select {
	case <-w.ready:
		return true
	case <-stop:
		g.mu.Lock()
		defer g.mu.Unlock()
		select {
		case <-w.ready:
			g.releaseLocked() // handed a worker just as it stopped: pass it on
		default:
			g.wait.Remove(e)
		}
		return false
	}
}

// release gives the worker back: to the head of the line if anyone waits.
func (g *gate) release() {
	g.mu.Lock()
	g.releaseLocked()
	g.mu.Unlock()
}

func (g *gate) releaseLocked() {
	if e := g.wait.Front(); e != nil {
		g.wait.Remove(e)
		close(e.Value.(*waiter).ready) // busy stays: the worker changes hands
		return
	}
	g.busy--
}

// queued returns the connections of the requests waiting for a worker.
func (g *gate) queued() []*conn {
	g.mu.Lock()
	defer g.mu.Unlock()
	var cs []*conn
	for e := g.wait.Front(); e != nil; e = e.Next() {
		cs = append(cs, e.Value.(*waiter).conn)
	}
	return cs
}

// load returns the requests in service and waiting.
func (g *gate) load() (busy, waiting int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.busy, g.wait.Len()
}
