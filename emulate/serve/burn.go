package serve

import (
	"runtime"
	"sync/atomic"
	"time"
	"trafficlab/emulate/cpuclock"
)

// burn spends d of CPU time on the calling goroutine, measured by its thread's own CPU
// clock rather than the wall clock, so that whatever keeps the thread off a core (a
// CFS quota that is spent, other threads on the node) stretches the wall time as it
// does for a real app's request, while the CPU work stays what the scenario says
// (scenario/types.go Pod.ServiceTime: "the CPU work of one request on an idle core").
// It returns false, early, when stop is closed.
func burn(d time.Duration, stop <-chan struct{}) bool {
	if d <= 0 {
		return true
	}
	// The thread clock measures a thread, not a goroutine: pin the goroutine to its
	// thread for the whole burn, or a migration would read another thread's clock.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := cpuclock.Thread()
	x := uint64(d) | 1
	for {
		// A short stretch of plain arithmetic between clock reads keeps most of the
		// time in user space; the overshoot past d is at most one stretch (~1 µs).
		for range 256 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
		if cpuclock.Thread()-start >= d {
			if x == 0 { // never: xorshift does not reach 0 from a non-zero state
				sink.Store(x)
			}
			return true
		}
		select {
		case <-stop:
			return false
		default:
		}
	}
}

// sink keeps the compiler from removing burn's arithmetic.
var sink atomic.Uint64
