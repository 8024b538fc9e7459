package client

import "testing"

// TestMuxOneConnectionUntilFull: an HTTP/2 pool puts streams on its first connection
// until the server's limit, and only then wants another (Go's clientConnPool).
func TestMuxOneConnectionUntilFull(t *testing.T) {
	var conns Conns
	p := &Pool{Limits: Limits{Streams: 3}}
	if _, ok, _ := p.TakeStream(0, &conns, nil); ok {
		t.Fatal("took a stream with no connection open")
	}
	p.Opening()
	a := conns.New(1, 0, 0)
	p.AddStreamConn(&conns, a)
	for i := 2; i <= 3; i++ {
		id, ok, _ := p.TakeStream(0, &conns, nil)
		if !ok || id != a {
			t.Fatalf("stream %d: got %d, %v; want connection %d", i, id, ok, a)
		}
	}
	if _, ok, _ := p.TakeStream(0, &conns, nil); ok {
		t.Fatal("a fourth stream fit under a limit of 3")
	}
	p.Opening()
	b := conns.New(2, 0, 0)
	p.AddStreamConn(&conns, b)
	if id, ok, _ := p.TakeStream(0, &conns, nil); !ok || id != b {
		t.Fatalf("got %d, %v; want the second connection %d", id, ok, b)
	}
	// A stream ending on the first connection makes room there again, first in line.
	if out, _ := p.EndStream(1, &conns, a, alive); out != Idle {
		t.Fatalf("ending a stream: %v, want Idle", out)
	}
	if id, ok, _ := p.TakeStream(2, &conns, nil); !ok || id != a {
		t.Fatalf("got %d, %v; want the first connection %d again", id, ok, a)
	}
	if p.Open() != 2 {
		t.Fatalf("open %d, want 2", p.Open())
	}
}

// TestMuxEndStreamHandsToWaiter: a waiter takes the freed stream at once.
func TestMuxEndStreamHandsToWaiter(t *testing.T) {
	var conns Conns
	p := &Pool{Limits: Limits{Streams: 1}}
	p.Opening()
	a := conns.New(1, 0, 0)
	p.AddStreamConn(&conns, a)
	p.Wait(Waiter{Slot: 7, Gen: 1})
	out, w := p.EndStream(5, &conns, a, alive)
	if out != Handed || w.Slot != 7 || conns.Get(a).Streams != 1 {
		t.Fatalf("got %v to %+v with %d streams; want Handed to slot 7 with 1 stream", out, w, conns.Get(a).Streams)
	}
}

// TestMuxRetire: after GOAWAY a connection takes no new stream and closes when its
// last one ends; one with no streams closes at once.
func TestMuxRetire(t *testing.T) {
	var conns Conns
	p := &Pool{Limits: Limits{Streams: 10}}
	p.Opening()
	a := conns.New(1, 0, 0)
	p.AddStreamConn(&conns, a)
	if p.Retire(&conns, a) {
		t.Fatal("a connection with a stream in progress closed at GOAWAY")
	}
	if _, ok, _ := p.TakeStream(1, &conns, nil); ok {
		t.Fatal("a retired connection took a new stream")
	}
	if out, _ := p.EndStream(2, &conns, a, alive); out != Closed {
		t.Fatalf("last stream on a retired connection: %v, want Closed", out)
	}
	if p.Open() != 0 {
		t.Fatalf("open %d after close, want 0", p.Open())
	}
	p.Opening()
	b := conns.New(1, 0, 0)
	p.AddStreamConn(&conns, b)
	p.EndStream(3, &conns, b, alive)
	if !p.Retire(&conns, b) || p.Open() != 0 {
		t.Fatalf("an idle connection did not close at GOAWAY (open %d)", p.Open())
	}
}

// TestMuxLifetime: a connection past MaxLifetime takes no new streams, as .NET's
// PooledConnectionLifetime applies to HTTP/2.
func TestMuxLifetime(t *testing.T) {
	var conns Conns
	p := &Pool{Limits: Limits{Streams: 10, MaxLifetime: 100}}
	p.Opening()
	a := conns.New(1, 0, 0)
	p.AddStreamConn(&conns, a)
	if _, ok, expired := p.TakeStream(100, &conns, nil); ok || len(expired) != 0 {
		t.Fatalf("a connection past its lifetime took a stream (ok %v) or closed under one (%v)", ok, expired)
	}
	if out, _ := p.EndStream(101, &conns, a, alive); out != Closed {
		t.Fatalf("last stream past the lifetime: %v, want Closed", out)
	}
	p.Opening()
	b := conns.New(1, 0, 200)
	p.AddStreamConn(&conns, b)
	p.EndStream(250, &conns, b, alive)
	if _, ok, expired := p.TakeStream(300, &conns, nil); ok || len(expired) != 1 || expired[0] != b || p.Open() != 0 {
		t.Fatalf("idle connection past its lifetime: took %v, expired %v, open %d; want it closed", ok, expired, p.Open())
	}
}
