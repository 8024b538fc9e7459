package delay

import (
	"fmt"
	"runtime"
	"time"

	nfqueue "github.com/florianl/go-nfqueue/v2"
	"golang.org/x/sys/unix"
)

// release is the timer thread: it accepts each held packet at its due time, sleeping
// in between. It sleeps in ppoll on an OS thread of its own rather than on a Go
// timer: the runtime's idle wait (epoll_pwait) counts in whole milliseconds, which
// made a 5 ms timer here fire 0.3 to 1.1 ms late, where ppoll's nanosecond timeout
// with a 1 ns timer slack fires within about 0.1 ms.
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
		for len(d.held) > 0 && (d.held[0].due <= now || d.closing) {
			batch = append(batch, d.held.pop())
		}
		d.wakeAt = forever
		if len(d.held) > 0 {
			d.wakeAt = d.held[0].due
		}
		next, stop := d.wakeAt, d.stop
		d.mu.Unlock()
		if len(batch) > 0 {
			late = d.accept(batch, late)
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

// accept issues the batch's verdicts and accounts for how late each went out; late
// is scratch space for that. Verdicts go by packet id, in any order
// (nfqnl_recv_verdict, net/netfilter/nfnetlink_queue.c, finds the entry by id).
func (d *Delayer) accept(batch []packet, late []time.Duration) []time.Duration {
	var err error
	late = late[:0]
	for _, p := range batch {
		if e := d.nf.SetVerdict(p.id, nfqueue.NfAccept); e != nil && err == nil {
			err = e
		}
		late = append(late, d.now()-p.due)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil && d.err == nil {
		d.err = fmt.Errorf("delay: verdict: %w", err)
	}
	d.stats.Delayed += uint64(len(batch))
	for i, l := range late {
		if l < 0 { // released early by Close
			continue
		}
		// The lead follows the wake-up and verdict time: the plain mean of the first
		// leadPackets packets, then an exponentially weighted mean over about as
		// many. That time is the machine's (its idle wake-up measured 0.2 ms here,
		// through 1 ns of timer slack), and it drifts with load.
		d.lead += (l - d.lead) / time.Duration(min(d.onTime+1, leadPackets))
		l -= time.Duration(batch[i].lead)
		if d.onTime == 0 {
			d.stats.MaxLate = l
		}
		d.onTime++
		d.sumLate += l
		d.stats.MaxLate = max(d.stats.MaxLate, l)
	}
	return late
}

// leadPackets is the span of the lead's moving mean, in packets.
const leadPackets = 32
