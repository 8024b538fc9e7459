package load

import (
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"trafficlab/emulate/timerthread"
)

// coarse is the last stretch of every wait (an arrival's intended time, a think
// time, an overhead) that the sleeper times instead of a Go timer. An idle Go
// program notices its timers in netpoll, whose epoll_wait counts whole
// milliseconds (runtime/netpoll_epoll.go netpoll), so a Go timer fires up to a
// millisecond late: open-loop latencies, counted from the intended start, would
// grow by that much, and a 1 ms think time would last half as long again.
const coarse = 2 * time.Millisecond

// Linux constants the syscall package lacks.
const (
	prSetTimerSlack  = 29  // linux/prctl.h PR_SET_TIMERSLACK
	futexWaitPrivate = 128 // linux/futex.h FUTEX_WAIT | FUTEX_PRIVATE_FLAG
	futexWakePrivate = 129 // FUTEX_WAKE | FUTEX_PRIVATE_FLAG
)

// sleeper wakes waiting goroutines at their times, to within tens of
// microseconds: one OS thread of its own sleeps on a futex until the earliest
// wake-up is due (the kernel's hrtimer, with the thread's timer slack cut from
// 50 µs to 1 ns), and a new earlier wake-up interrupts it.
type sleeper struct {
	base time.Time
	word atomic.Uint32 // the futex: bumped to interrupt the thread's wait

	mu   sync.Mutex
	heap []wakeup // earliest first
	stop bool
	done chan struct{}
	// releaseP gives back the P timerthread.Reserve added for the thread, which
	// parks in futex for most of its life.
	releaseP func()
}

type wakeup struct {
	at  time.Duration // since base
	w   *waker
	gen uint64
}

// waker is what one goroutine waits on; it has one wake-up pending at most.
type waker struct {
	ch  chan uint64
	gen uint64
}

func newWaker() waker { return waker{ch: make(chan uint64, 1)} }

func newSleeper() *sleeper {
	s := &sleeper{base: time.Now(), done: make(chan struct{}), releaseP: timerthread.Reserve()}
	go s.loop()
	return s
}

// wakeAfter registers w to be woken after d; the token it will receive is returned.
func (s *sleeper) wakeAfter(w *waker, d time.Duration) uint64 {
	at := time.Since(s.base) + d
	s.mu.Lock()
	w.gen++ // under the lock: the sleeper's thread reads it
	e := wakeup{at: at, w: w, gen: w.gen}
	s.push(e)
	first := s.heap[0] == e
	s.mu.Unlock()
	if first {
		s.word.Add(1)
		futex(&s.word, futexWakePrivate, 1, nil)
	}
	return e.gen
}

// close ends the thread.
func (s *sleeper) close() {
	s.mu.Lock()
	s.stop = true
	s.mu.Unlock()
	s.word.Add(1)
	futex(&s.word, futexWakePrivate, 1, nil)
	<-s.done
	s.releaseP()
}

func (s *sleeper) loop() {
	runtime.LockOSThread() // the timer slack is the thread's; the thread ends with the goroutine
	defer close(s.done)
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0)
	for {
		v := s.word.Load()
		s.mu.Lock()
		if s.stop {
			s.mu.Unlock()
			return
		}
		now := time.Since(s.base)
		for len(s.heap) > 0 && s.heap[0].at <= now {
			e := s.pop()
			if e.gen == e.w.gen {
				select {
				case e.w.ch <- e.gen:
				default:
				}
			}
		}
		var ts *syscall.Timespec
		if len(s.heap) > 0 {
			t := syscall.NsecToTimespec(int64(s.heap[0].at - now))
			ts = &t
		}
		s.mu.Unlock()
		// Returns when woken, when the word changed since it was read, or at the timeout.
		futex(&s.word, futexWaitPrivate, v, ts)
	}
}

func futex(addr *atomic.Uint32, op, val uint32, ts *syscall.Timespec) {
	_, _, _ = syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), uintptr(op), uintptr(val),
		uintptr(unsafe.Pointer(ts)), 0, 0)
}

// push and pop keep s.heap a binary min-heap on at, without the interface
// boxing of container/heap.
func (s *sleeper) push(e wakeup) {
	h := append(s.heap, e)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p].at <= h[i].at {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	s.heap = h
}

func (s *sleeper) pop() wakeup {
	h := s.heap
	e := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = wakeup{}
	h = h[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h[l].at < h[m].at {
			m = l
		}
		if r := l + 1; r < n && h[r].at < h[m].at {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	s.heap = h
	return e
}

// waitUntil waits until at, a Go timer for all but the last stretch and the
// sleeper for that; false if stop closes first.
func (s *sleeper) waitUntil(at time.Time, t **time.Timer, w *waker, stop1, stop2 <-chan struct{}) bool {
	for {
		d := time.Until(at)
		if d <= 0 {
			return true
		}
		if d > coarse {
			if *t == nil {
				*t = time.NewTimer(d - coarse)
			} else {
				(*t).Reset(d - coarse)
			}
			select {
			case <-(*t).C:
				continue
			case <-stop1:
			case <-stop2:
			}
			(*t).Stop()
			return false
		}
		gen := s.wakeAfter(w, d)
		for {
			select {
			case g := <-w.ch:
				if g != gen {
					continue
				}
			case <-stop1:
				return false
			case <-stop2:
				return false
			}
			break
		}
		// The futex may wake a hair early by the monotonic clock's reading here.
	}
}
