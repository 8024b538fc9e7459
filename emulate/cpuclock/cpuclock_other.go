//go:build !unix

package cpuclock

import "time"

var epoch = time.Now()

// Thread falls back to the wall clock where no thread CPU clock exists: the burn
// then lasts d of wall time, and a CPU limit does not stretch it. emulate runs on
// Linux only; this keeps the CLI building elsewhere.
func Thread() time.Duration { return time.Since(epoch) }

// Process is unknown without a process CPU clock: 0, so that serve's overhead
// and the load generator's CPU then measure none.
func Process() time.Duration { return 0 }
