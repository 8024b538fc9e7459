package sim

import (
	"testing"
	"time"
)

// endless is a handler whose every event schedules the next one 1 ns later: a run
// that never runs out of events; it calls Stop on its stopAt-th.
type endless struct {
	k       *Kernel
	kind    uint8
	handled int
	stopAt  int
}

func (c *endless) Handle(ev Event) {
	c.handled++
	if c.handled == c.stopAt {
		c.k.Stop()
	}
	c.k.After(1, c.kind, 0, 0)
}

// Stop ends Run after the event being handled, leaves the clock at it, and keeps
// later Runs from handling more.
func TestStopEndsRunAfterTheEventInHand(t *testing.T) {
	k := New()
	c := &endless{k: k, stopAt: 100}
	c.kind = k.Register(c.Handle)
	k.At(0, c.kind, 0, 0)
	if k.Run(1 << 60) {
		t.Fatal("Run reports it ran to its horizon after Stop")
	}
	if c.handled != 100 || k.Now() != 99 {
		t.Errorf("handled %d events, clock at %d; want 100 and 99", c.handled, k.Now())
	}
	if k.Run(1<<60) || c.handled != 100 {
		t.Errorf("a Run after Stop handled %d events", c.handled-100)
	}
}

// Stop from another goroutine cuts a run that would never end short.
func TestStopFromAnotherGoroutine(t *testing.T) {
	k := New()
	c := &endless{k: k}
	c.kind = k.Register(c.Handle)
	k.At(0, c.kind, 0, 0)
	time.AfterFunc(10*time.Millisecond, k.Stop)
	done := make(chan bool)
	go func() { done <- k.Run(1 << 60) }()
	select {
	case ran := <-done:
		if ran {
			t.Error("Run reports it ran to its horizon after Stop")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run still going 10 s after Stop")
	}
}

// A Run that reaches its horizon says so.
func TestRunReportsReachingItsHorizon(t *testing.T) {
	k := New()
	c := &endless{k: k}
	c.kind = k.Register(c.Handle)
	k.At(0, c.kind, 0, 0)
	if !k.Run(50) || k.Now() != 50 || c.handled != 50 {
		t.Errorf("Run(50): handled %d, clock %d; want true, 50 events, clock 50", c.handled, k.Now())
	}
}
