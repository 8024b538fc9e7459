//go:build !unix

package serve

import "time"

var epoch = time.Now()

// threadCPU falls back to the wall clock where no thread CPU clock exists: the burn
// then lasts d of wall time, and a CPU limit does not stretch it. emulate runs on
// Linux only; this keeps the CLI building elsewhere.
func threadCPU() time.Duration { return time.Since(epoch) }

// processCPU is unknown without a process CPU clock: overhead then measures none.
func processCPU() time.Duration { return 0 }
