// Package timerthread keeps a Go scheduler P free for each thread that emulate
// parks in a blocking system call for precise timing (the delay relay's ppoll, the
// load generator's futex). Such a thread keeps the P it entered the call with
// until the runtime's sysmon retakes it (retake in runtime/proc.go), and sysmon
// backs its tick off from 20 µs to 10 ms while the process is idle. With as many
// parked threads as GOMAXPROCS, every other goroutine (the relay's read loops, the
// load generator's connections) waited for that tick: two relays on a 2-core
// machine added 0.7 to 5 ms to a 10 ms delay.
package timerthread

import (
	"runtime"
	"sync"
)

var mu sync.Mutex

// Reserve raises GOMAXPROCS by one for a thread about to park in system calls for
// most of its life; the returned func, called once when the thread has ended,
// takes it back.
func Reserve() (release func()) {
	adjust(1)
	var once sync.Once
	return func() { once.Do(func() { adjust(-1) }) }
}

func adjust(delta int) {
	mu.Lock()
	defer mu.Unlock()
	runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + delta)
}
