// Package sim is the discrete-event kernel: an integer nanosecond clock, a queue of small
// value events and seeded random streams. It knows nothing of Kubernetes.
package sim

import (
	"sync/atomic"
	"time"
)

// Time is simulated time in nanoseconds since the start of a run.
type Time int64

// Duration converts a Go duration to simulated time.
func Duration(d time.Duration) Time { return Time(d) }

// Seconds is t in seconds.
func (t Time) Seconds() float64 { return float64(t) / 1e9 }

// Event is a small value: what happens (Kind), to which entity (Obj), and a generation
// (Gen) the handler compares with the entity's own to ignore events made stale by later
// decisions. Events carry no pointers or closures, so scheduling one allocates nothing
// once the queue has grown to its working size; at 24 bytes, more of the heap stays
// in cache.
type Event struct {
	At Time
	// key is the scheduling sequence number shifted left by 8, with the kind in the
	// low byte: ordering by key is ordering by sequence.
	key uint64
	Obj int32
	Gen uint32
}

// Kind is what the event is, as returned by Register.
func (ev Event) Kind() uint8 { return uint8(ev.key) }

// Handler receives the events of one kind: a subsystem registers a method of its
// own for each kind it schedules, so that no one switches over every kind.
type Handler func(ev Event)

// Kernel runs events in time order; events at the same instant run in the order they
// were scheduled, which keeps runs deterministic.
type Kernel struct {
	now      Time
	seq      uint64
	queue    queue
	handlers []Handler
	stop     atomic.Bool
	// Processed counts events handled, for benchmarks.
	Processed uint64
}

// New returns an empty kernel at time 0.
func New() *Kernel { return &Kernel{} }

// Register returns the kind number of events that h handles. At most 256 kinds.
func (k *Kernel) Register(h Handler) uint8 {
	if len(k.handlers) == 256 {
		panic("sim: more than 256 event kinds")
	}
	k.handlers = append(k.handlers, h)
	return uint8(len(k.handlers) - 1)
}

// Now is the current simulated time.
func (k *Kernel) Now() Time { return k.now }

// At schedules an event at absolute time at (never before now).
func (k *Kernel) At(at Time, kind uint8, obj int32, gen uint32) {
	if at < k.now {
		at = k.now
	}
	k.seq++
	k.queue.push(Event{At: at, key: k.seq<<8 | uint64(kind), Obj: obj, Gen: gen})
}

// After schedules an event d after now.
func (k *Kernel) After(d Time, kind uint8, obj int32, gen uint32) {
	k.At(k.now+d, kind, obj, gen)
}

// Stop makes Run return after the event it is handling, now and from then on. It
// may be called from another goroutine: it is how a long run is cut short.
func (k *Kernel) Stop() { k.stop.Store(true) }

// Run handles the events before until, in order; the clock then rests at until. The horizon is exclusive so that a run of
// length d covers [0, d): at 1 request a second, 10 s sends 10 requests, as vegeta does.
// It returns false when Stop cut it short: the clock then rests at the last event
// handled, and events of that instant may be left.
func (k *Kernel) Run(until Time) bool {
	for len(k.queue) > 0 {
		if k.queue[0].At >= until {
			break
		}
		if k.stop.Load() {
			return false
		}
		ev := k.queue.pop()
		k.now = ev.At
		k.Processed++
		k.handlers[uint8(ev.key)](ev)
	}
	if k.stop.Load() {
		return false
	}
	if k.now < until {
		k.now = until
	}
	return true
}

// Pending is the number of scheduled events.
func (k *Kernel) Pending() int { return len(k.queue) }

// epoch is the wall-clock time a run starts at: the algorithms ported from
// Kubernetes read wall-clock times (pod start, condition transitions, metric
// timestamps), and a request's sent time is written as one.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Clock is t as a wall-clock time.
func (t Time) Clock() time.Time { return epoch.Add(time.Duration(t)) }
