package client

import (
	"testing"

	"trafficlab/sim"
)

func alive(Waiter) bool { return true }

func TestPoolReusesTheMostRecentlyUsedIdleConnection(t *testing.T) {
	var conns Conns
	p := &Pool{}
	a, b := conns.New(1, 0, 0), conns.New(2, 0, 0)
	p.Opening()
	p.Opening()
	p.Release(10, &conns, a, alive)
	p.Release(20, &conns, b, alive)
	id, ok, _ := p.TakeIdle(30, &conns, nil)
	if !ok || id != b {
		t.Fatalf("took %d (ok=%v), want the last released %d", id, ok, b)
	}
}

func TestPoolLongestIdleReusesTheLongestIdle(t *testing.T) {
	var conns Conns
	p := &Pool{Limits: Limits{Pick: LongestIdle}}
	a, b := conns.New(1, 0, 0), conns.New(2, 0, 0)
	p.Opening()
	p.Opening()
	p.Release(10, &conns, a, alive)
	p.Release(20, &conns, b, alive)
	if id, ok, _ := p.TakeIdle(30, &conns, nil); !ok || id != a {
		t.Fatalf("took %d (ok=%v), want the first released %d", id, ok, a)
	}
	if id, ok, _ := p.TakeIdle(30, &conns, nil); !ok || id != b {
		t.Fatalf("took %d (ok=%v), want %d", id, ok, b)
	}
}

// FirstOpened takes the idle connection opened first, whatever the order they came
// back in, and leaves the rest in release order, so the longest idle still expires
// first.
func TestPoolFirstOpenedReusesTheOldestConnection(t *testing.T) {
	var conns Conns
	p := &Pool{Limits: Limits{Pick: FirstOpened, IdleTimeout: 100}}
	a, b, c := conns.New(1, 0, 0), conns.New(2, 0, 5), conns.New(3, 0, 7)
	for range 3 {
		p.Opening()
	}
	p.Release(10, &conns, c, alive)
	p.Release(20, &conns, a, alive)
	p.Release(30, &conns, b, alive)
	if id, ok, _ := p.TakeIdle(40, &conns, nil); !ok || id != a {
		t.Fatalf("took %d (ok=%v), want the first opened %d", id, ok, a)
	}
	// c, released at 10, is idle longest: it expires first.
	if expired := p.Expire(110, &conns, nil); len(expired) != 1 || expired[0] != c {
		t.Fatalf("expired %v at 110, want [%d]", expired, c)
	}
	if id, ok, _ := p.TakeIdle(111, &conns, nil); !ok || id != b {
		t.Fatalf("took %d (ok=%v), want %d", id, ok, b)
	}
}

func TestPoolLimits(t *testing.T) {
	cases := []struct {
		name    string
		limits  Limits
		open    int      // connections opened at t=0
		release sim.Time // when each is released
		take    sim.Time // when an idle one is asked for
		idle    int      // idle connections fit for use at take
		closed  int      // closed on release
		expired int      // closed as stale at take
	}{
		{"unlimited keeps all idle", Limits{}, 5, 1, 2, 5, 0, 0},
		// Go: connections above MaxIdleConnsPerHost close when returned.
		{"max idle 2 closes the rest", Limits{MaxIdle: 2}, 5, 1, 2, 2, 3, 0},
		{"idle timeout expires them", Limits{IdleTimeout: 10}, 3, 1, 11, 0, 0, 3},
		{"just before the idle timeout", Limits{IdleTimeout: 10}, 3, 1, 10, 3, 0, 0},
		// .NET PooledConnectionLifetime: checked when a connection is returned.
		{"lifetime closes on release", Limits{MaxLifetime: 1}, 3, 1, 2, 0, 3, 0},
		{"lifetime expires idle ones", Limits{MaxLifetime: 5}, 3, 1, 5, 0, 0, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var conns Conns
			p := &Pool{Limits: c.limits}
			ids := []ConnID{}
			for i := 0; i < c.open; i++ {
				p.Opening()
				ids = append(ids, conns.New(int32(i), 0, 0))
			}
			closed := 0
			for _, id := range ids {
				if out, _ := p.Release(c.release, &conns, id, alive); out == Closed {
					closed++
				}
			}
			idle, expired := 0, 0
			for {
				var ex []ConnID
				_, ok, ex := p.TakeIdle(c.take, &conns, ex)
				expired += len(ex)
				if !ok {
					break
				}
				idle++
			}
			if idle != c.idle || closed != c.closed || expired != c.expired {
				t.Fatalf("idle %d closed %d expired %d; want %d %d %d", idle, closed, expired, c.idle, c.closed, c.expired)
			}
			if p.Open() != c.idle {
				t.Fatalf("pool counts %d open, want %d (the ones taken)", p.Open(), c.idle)
			}
		})
	}
}

func TestPoolExpireClosesIdleConnectionsOnTime(t *testing.T) {
	var conns Conns
	p := &Pool{Limits: Limits{IdleTimeout: 10}}
	var ids []ConnID
	for i := 0; i < 3; i++ {
		p.Opening()
		ids = append(ids, conns.New(int32(i), 0, 0))
	}
	for i, id := range ids {
		p.Release(sim.Time(i), &conns, id, alive) // released at 0, 1, 2
	}
	if at, ok := p.NextExpiry(&conns); !ok || at != 10 {
		t.Fatalf("next expiry %d (ok=%v), want 10: the oldest idle one", at, ok)
	}
	if got := p.Expire(10, &conns, nil); len(got) != 1 || got[0] != ids[0] {
		t.Fatalf("at 10 expired %v, want only %d", got, ids[0])
	}
	if got := p.Expire(12, &conns, nil); len(got) != 2 || p.Open() != 0 {
		t.Fatalf("at 12 expired %v with %d open, want the other two and none open", got, p.Open())
	}
	if _, ok := p.NextExpiry(&conns); ok {
		t.Fatal("an empty idle list has no expiry")
	}
}

func TestPoolMaxPerHostQueuesAndHandsOver(t *testing.T) {
	var conns Conns
	p := &Pool{Limits: Limits{MaxPerHost: 1}}
	if !p.CanOpen() {
		t.Fatal("an empty pool must allow a connection")
	}
	p.Opening()
	id := conns.New(0, 0, 0)
	if p.CanOpen() {
		t.Fatal("maxPerHost 1 with one open must not allow another")
	}
	p.Wait(Waiter{Slot: 7, Gen: 1}) // gave up later
	p.Wait(Waiter{Slot: 8, Gen: 1})
	live := func(w Waiter) bool { return w.Slot != 7 }
	out, w := p.Release(5, &conns, id, live)
	if out != Handed || w.Slot != 8 {
		t.Fatalf("release gave %v to %+v, want Handed to slot 8 (slot 7 gave up)", out, w)
	}
	if p.HasWaiters() {
		t.Fatal("no one should be waiting any more")
	}
	if out, _ := p.Release(6, &conns, id, live); out != Idle {
		t.Fatalf("with no waiters the connection must go idle, got %v", out)
	}
}

func TestConnsReuseFreedSlots(t *testing.T) {
	var conns Conns
	a := conns.New(1, 0, 0)
	conns.Free(a)
	if b := conns.New(2, 0, 0); b != a || conns.Get(b).Pod != 2 || !conns.Get(b).Open {
		t.Fatalf("a freed slot must be reused for the next connection")
	}
}
