//go:build unix

// Package cpuclock reads the CPU clocks of the calling thread and of the whole
// process: what a pod's app burns its service time by, and what a pod's app and
// load generator say they spent.
package cpuclock

import (
	"time"

	"golang.org/x/sys/unix"
)

// Thread is the calling thread's CPU time, user and system, in nanoseconds
// (clock_gettime(CLOCK_THREAD_CPUTIME_ID): the scheduler's exact runtime of the
// thread, unlike getrusage's tick-sampled split). It stops while the thread waits for
// a core or sits throttled by its cgroup's quota.
func Thread() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic("clock_gettime(CLOCK_THREAD_CPUTIME_ID): " + err.Error()) // Linux has had it since 2.6.12
	}
	return time.Duration(ts.Nano())
}

// Process is the CPU time of every thread of the process, user and system, in
// nanoseconds (clock_gettime(CLOCK_PROCESS_CPUTIME_ID)).
func Process() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		panic("clock_gettime(CLOCK_PROCESS_CPUTIME_ID): " + err.Error())
	}
	return time.Duration(ts.Nano())
}
