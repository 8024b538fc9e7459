package sim

import (
	"math/rand/v2"
	"testing"
)

type recorder struct {
	k   *Kernel
	got []Event
}

func (r *recorder) Handle(ev Event) { r.got = append(r.got, ev) }

func TestEventsRunInTimeThenScheduleOrder(t *testing.T) {
	k := New()
	r := &recorder{k: k}
	kind := k.Register(r.Handle)
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 5000
	for i := 0; i < n; i++ {
		// Few distinct times, so ties are common and their order is tested too.
		k.At(Time(rng.IntN(50)), kind, int32(i), 0)
	}
	k.Run(1 << 60)
	if len(r.got) != n {
		t.Fatalf("handled %d events, want %d", len(r.got), n)
	}
	for i := 1; i < n; i++ {
		a, b := r.got[i-1], r.got[i]
		if a.At > b.At || (a.At == b.At && a.Obj > b.Obj) {
			t.Fatalf("event %d (t=%d obj=%d) ran after (t=%d obj=%d)", i, b.At, b.Obj, a.At, a.Obj)
		}
	}
}

func TestRunStopsAtHorizon(t *testing.T) {
	k := New()
	r := &recorder{k: k}
	kind := k.Register(r.Handle)
	k.At(10, kind, 1, 0)
	k.At(20, kind, 2, 0)
	k.At(30, kind, 3, 0)
	k.Run(20)
	if len(r.got) != 1 || k.Now() != 20 || k.Pending() != 2 {
		t.Fatalf("after Run(20): handled %d, now %d, pending %d; want 1, 20, 2 (the horizon is exclusive)", len(r.got), k.Now(), k.Pending())
	}
	k.Run(25)
	if k.Now() != 25 {
		t.Fatalf("clock rests at %d, want the horizon 25", k.Now())
	}
}

func TestPastEventsRunNow(t *testing.T) {
	k := New()
	r := &recorder{k: k}
	kind := k.Register(r.Handle)
	k.Run(100)
	k.At(5, kind, 1, 0)
	k.Run(200)
	if len(r.got) != 1 || r.got[0].At != 100 {
		t.Fatalf("an event scheduled in the past must run at now (100): %+v", r.got)
	}
}

type chain struct {
	k    *Kernel
	kind uint8
	left int
}

func (c *chain) Handle(ev Event) {
	if c.left > 0 {
		c.left--
		c.k.After(Time(1+ev.Obj%7), c.kind, ev.Obj, ev.Gen+1)
	}
}

func TestSteadyStateSchedulingDoesNotAllocate(t *testing.T) {
	k := New()
	c := &chain{k: k}
	c.kind = k.Register(c.Handle)
	for i := 0; i < 100; i++ {
		k.At(Time(i), c.kind, int32(i), 0)
	}
	c.left = 1000
	k.Run(1 << 60) // grow the queue to its working size
	allocs := testing.AllocsPerRun(10, func() {
		for i := 0; i < 100; i++ {
			k.After(Time(i), c.kind, int32(i), 0)
		}
		c.left = 10000
		k.Run(1 << 60)
	})
	if allocs != 0 {
		t.Fatalf("%.0f allocations per run of 10,100 events; want 0", allocs)
	}
}

func TestStreamsAreReproducibleAndIndependent(t *testing.T) {
	a1, a2 := Stream(7, "pod/webapp1-0"), Stream(7, "pod/webapp1-0")
	for i := 0; i < 100; i++ {
		if a1.Uint64() != a2.Uint64() {
			t.Fatal("same seed and entity gave different streams")
		}
	}
	pairs := [][2]*rand.Rand{
		{Stream(7, "pod/webapp1-0"), Stream(7, "pod/webapp1-1")},
		{Stream(1, "pod/webapp1-0"), Stream(2, "pod/webapp1-0")},
	}
	for _, p := range pairs {
		same := 0
		for i := 0; i < 100; i++ {
			if p[0].Uint64() == p[1].Uint64() {
				same++
			}
		}
		if same > 0 {
			t.Fatalf("distinct streams agreed on %d of 100 draws", same)
		}
	}
}

func BenchmarkEvents(b *testing.B) {
	k := New()
	c := &chain{k: k}
	c.kind = k.Register(c.Handle)
	for i := 0; i < 200; i++ {
		k.At(Time(i), c.kind, int32(i), 0)
	}
	c.left = b.N
	b.ResetTimer()
	k.Run(1 << 62)
	b.ReportMetric(float64(k.Processed)/b.Elapsed().Seconds()/1e6, "Mevents/s")
}

type stopper struct {
	recorder
	at int32 // the object whose event stops the kernel
}

func (s *stopper) Handle(ev Event) {
	s.recorder.Handle(ev)
	if ev.Obj == s.at {
		s.k.Stop()
	}
}

func TestStopEndsTheRunAfterTheCurrentEvent(t *testing.T) {
	k := New()
	s := &stopper{recorder: recorder{k: k}, at: 2}
	kind := k.Register(s.Handle)
	for i := int32(1); i <= 3; i++ {
		k.At(Time(10*i), kind, i, 0)
	}
	k.Run(100)
	k.Run(200)
	if len(s.got) != 2 || k.Now() != 20 || k.Pending() != 1 {
		t.Fatalf("handled %d, now %d, pending %d; want 2, 20 (where it stopped), 1", len(s.got), k.Now(), k.Pending())
	}
}
