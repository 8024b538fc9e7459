package logpipe

import (
	"math"
	"testing"

	"trafficlab/model/disk"
	"trafficlab/sim"
)

const sec = sim.Time(1e9)

// neighbour runs R3's node for 3 s: a pod logs a 200-byte line every 1/rate s into a
// log path drained to a 10 MB/s disk, on which a neighbour writes 8 MiB at 0, 1 and 2 s.
// At equal times the neighbour's write comes first, then the runtime writer's
// completion, then the app's line. It returns the log path's stats and the first line
// that blocked (-1 if none) with its time.
func neighbour(cfg Config, rate int64) (s Stats, first int64, firstAt sim.Time) {
	const (
		horizon        = 3 * sec
		never          = sim.Time(math.MaxInt64)
		logs, neighbor = 0, 1
	)
	dev := disk.New(disk.Limits{Throughput: 10_000_000})
	p := New(cfg)
	busy, written := false, never
	chunk, line := sim.Time(0), int64(0)
	first = -1
	var out []int32
	start := func(now sim.Time) {
		if b, l, ok := p.Take(); ok {
			busy, written = true, dev.Write(now, logs, FileBytes(b, l), 0)
		}
	}
	for {
		c, d, l := never, never, never
		if chunk < horizon {
			c = chunk
		}
		if busy && written < horizon {
			d = written
		}
		if t := sim.Time(line * 1e9 / rate); t < horizon {
			l = t
		}
		switch {
		case c == never && d == never && l == never:
			return p.Stats(), first, firstAt
		case c <= d && c <= l:
			dev.Write(c, neighbor, 8<<20, 0)
			chunk += sec
		case d <= l:
			busy = false
			out = p.Written(d, out[:0])
			start(d)
		default:
			if !p.Write(l, int32(line), 200) && first < 0 {
				first, firstAt = line, l
			}
			line++
			start(l)
		}
	}
}

// The threshold, for synchronous logging. The runtime's path holds 172,032 bytes: 860
// lines of 200. At t = 0 the neighbour's 8 MiB takes the disk for 0.8388608 s. Line 0
// is taken at once, alone, and its write (240 bytes with the prefix, 24 µs) finishes
// behind the 8 MiB at t1 = 0.8388848 s. The next batch, 163 lines (32,600 bytes, 3.912
// ms), finishes at t2 = 0.8427968 s, and from then on the writer drains 8.3 MB/s, far
// above what the app logs. So the path overflows if line 860 arrives before t1 (lines
// 0..860 held) or line 861 before t2 (lines 1..861 held): 860/rate < t1 or
// 861/rate < t2, i.e. rate > 1021.6 lines/s: just below the rate at which one
// chunk's service time produces the path's capacity, 172,032 / (200 × 0.8427968 s).
// Each second repeats the first: the path and the disk are empty again when the next
// chunk comes.
func TestNoisyNeighbour(t *testing.T) {
	cases := []struct {
		name    string
		cfg     Config
		rate    int64
		first   int64
		firstAt sim.Time
		blocked int64
		max     sim.Time
	}{
		{name: "sync, well below the threshold", rate: 1000, first: -1},
		{name: "sync, just below", rate: 1021, first: -1},
		// Line 861 at 861e9/1022 = 842,465,753 ns < t2; it is the only one: line 862
		// comes after t2. Once a second: 3 lines, each 331,047 ns.
		{name: "sync, just above", rate: 1022, first: 861, firstAt: 842_465_753, blocked: 3, max: 331_047},
		// Line 860 at 781,818,181 ns < t1 blocks; at t1 only it fits again (lines
		// 1..860 held). At t2, 163 lines leave and lines 861..927 (67) go in. 68 a
		// second; the longest wait is line 861's: 842,796,800 - 782,727,272.
		{name: "sync, above", rate: 1100, first: 860, firstAt: 781_818_181, blocked: 204, max: 60_069_528},
		// Buffered at 1000 lines/s: the 262,144-byte buffer holds 1310 lines, so line
		// 1310 (1.31 s) flushes 262,000 bytes into the 172,032-byte path: the flush
		// waits for three batches of 163 lines, queued behind the 8 MiB of t = 1 s:
		// 1.8388608 + 3 × 0.003912 = 1.8505968 s, 540.5968 ms after line 1310. Lines
		// 1310..1850 (541) wait. The buffer then holds 541 lines and fills again at line
		// 2620 (2.62 s), whose flush waits until 2.8505968 s: lines 2620..2850 (231).
		// Buffering blocks where synchronous logging did not: its flush never fits the
		// path, so it always waits for the disk. (Its 30 s timer does not fire in 3 s.)
		{name: "buffered at 1000 lines/s", cfg: Config{Buffer: ZapBufferSize}, rate: 1000,
			first: 1310, firstAt: 1310 * 1e6, blocked: 772, max: 540_596_800},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, first, at := neighbour(c.cfg, c.rate)
			if first != c.first || (first >= 0 && at != c.firstAt) {
				t.Errorf("first blocked: line %d at %d, want %d at %d", first, at, c.first, c.firstAt)
			}
			if s.Blocked != c.blocked || s.MaxBlocked != c.max {
				t.Errorf("blocked %d, longest %d ns; want %d, %d ns", s.Blocked, s.MaxBlocked, c.blocked, c.max)
			}
		})
	}
}
