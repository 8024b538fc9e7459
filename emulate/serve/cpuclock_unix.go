//go:build unix

package serve

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the calling thread's CPU time, user and system, in nanoseconds
// (clock_gettime(CLOCK_THREAD_CPUTIME_ID): the scheduler's exact runtime of the
// thread, unlike getrusage's tick-sampled split). It stops while the thread waits for
// a core or sits throttled by its cgroup's quota.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic("clock_gettime(CLOCK_THREAD_CPUTIME_ID): " + err.Error()) // Linux has had it since 2.6.12
	}
	return time.Duration(ts.Nano())
}

// processCPU is the CPU time of every thread of the process, user and system, in
// nanoseconds (clock_gettime(CLOCK_PROCESS_CPUTIME_ID)).
func processCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		panic("clock_gettime(CLOCK_PROCESS_CPUTIME_ID): " + err.Error())
	}
	return time.Duration(ts.Nano())
}
