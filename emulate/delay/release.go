package delay

import (
	"fmt"
	"runtime"
	"slices"
	"time"

	nfqueue "github.com/florianl/go-nfqueue/v2"
	"golang.org/x/sys/unix"
)

// release is the timer thread: it accepts each held packet at its due time, sleeping
// in between. It sleeps in ppoll on an OS thread of its own rather than on a Go
// timer: the runtime's idle wait (epoll_pwait) counts in whole milliseconds, which
// made a 5 ms timer here fire 0.3 to 1.1 ms late, where ppoll's nanosecond timeout
// with a 1 ns timer slack fires within about 0.1 ms.
//
// It wakes early by the lead and spins out what is left of a packet's delay, so
// that no verdict goes out before the time its delay draw asked for: a netem delay
// is a floor (the packet is dequeued once its time_to_send has passed,
// netem_dequeue in net/sched/sch_netem.c), and a relay that sometimes delivers
// early makes round trips shorter than the network they emulate.
func (d *Delayer) release() {
	defer close(d.done)
	// Locked for good: the timer slack below belongs to this thread, which the
	// runtime discards when the goroutine ends.
	runtime.LockOSThread()
	// The default slack lets the kernel fire a normal thread's timer up to 50 µs late
	// to batch wake-ups (prctl(2), PR_SET_TIMERSLACK).
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	fds := []unix.PollFd{{Fd: int32(d.efd), Events: unix.POLLIN}}
	var batch []packet
	var late []time.Duration
	var count [8]byte
	for {
		d.mu.Lock()
		now := d.now()
		batch = batch[:0]
		for d.held.len() > 0 && (d.held.first().wake <= now || d.closing) {
			batch = append(batch, d.held.pop())
		}
		closing := d.closing
		if len(batch) > 0 && !closing {
			d.wakeups.add(now - batch[0].wake)
		}
		d.wakeAt = forever
		if d.held.len() > 0 {
			d.wakeAt = d.held.first().wake
		}
		next, stop := d.wakeAt, d.stop
		d.mu.Unlock()
		if len(batch) > 0 {
			late = d.accept(batch, late, closing)
			continue // time went by: look again before sleeping
		}
		if stop {
			return
		}
		var timeout *unix.Timespec
		if next != forever {
			ts := unix.NsecToTimespec(int64(next - now))
			timeout = &ts
		}
		// EINTR or a wake: the loop looks again either way.
		if n, _ := unix.Ppoll(fds, timeout, nil); n > 0 {
			unix.Read(d.efd, count[:])
		}
	}
}

// accept issues the batch's verdicts, none before its packet's due time unless the
// Delayer is closing, and accounts for how late each went out; late is scratch
// space for that. Verdicts go by packet id, in any order (nfqnl_recv_verdict,
// net/netfilter/nfnetlink_queue.c, finds the entry by id).
func (d *Delayer) accept(batch []packet, late []time.Duration, closing bool) []time.Duration {
	var err error
	var spun time.Duration
	late = late[:0]
	for _, p := range batch {
		if now := d.now(); !closing && now < p.due() {
			// At most the lead, a fraction of a millisecond, and only when this
			// wake-up came sooner than the lead expected.
			for d.now() < p.due() {
			}
			spun += d.now() - now
		}
		if e := d.nf.SetVerdict(p.id, nfqueue.NfAccept); e != nil && err == nil {
			err = e
		}
		late = append(late, d.now()-p.due())
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil && d.err == nil {
		d.err = fmt.Errorf("delay: verdict: %w", err)
	}
	d.stats.Delayed += uint64(len(batch))
	d.stats.Spun += spun
	for _, l := range late {
		if l < 0 { // released early by Close
			continue
		}
		if d.onTime == 0 {
			d.stats.MaxLate = l
		}
		d.onTime++
		d.sumLate += l
		d.stats.MaxLate = max(d.stats.MaxLate, l)
	}
	d.lead = d.wakeups.low()
	return late
}

// wakeups keeps the timer thread's latest wake-up delays, how long after the time it
// asked for it found packets to release, to set the lead from.
type wakeups struct {
	ring    [wakeupSpan]time.Duration
	n       int
	scratch [wakeupSpan]time.Duration
}

const (
	// wakeupSpan is how many wake-ups the lead follows: recent enough to follow the
	// machine's load, enough to take a quantile of.
	wakeupSpan = 64
	// leadQuantile picks the lead from them: the median wake-up delay. Half the
	// wake-ups then come sooner and spin for the rest of it, tens of microseconds;
	// the other half come late by their delay over the median. A lower quantile
	// spins less and comes later: measured under load here, the 10th percentile
	// (20 µs) left verdicts 0.16–0.24 ms late on average.
	leadQuantile = 0.5
	// leadSamples is how many wake-ups the first lead needs.
	leadSamples = 10
)

func (w *wakeups) add(d time.Duration) {
	w.ring[w.n%wakeupSpan] = d
	w.n++
}

// low is the leadQuantile of the kept wake-up delays (0 until there are
// leadSamples).
func (w *wakeups) low() time.Duration {
	k := min(w.n, wakeupSpan)
	if k < leadSamples {
		return 0
	}
	s := w.scratch[:k]
	copy(s, w.ring[:k])
	slices.Sort(s)
	return max(s[int(leadQuantile*float64(k))], 0)
}
