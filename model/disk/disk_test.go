package disk

import (
	"testing"

	"trafficlab/sim"
)

const (
	us  = sim.Time(1e3)
	ms  = sim.Time(1e6)
	sec = sim.Time(1e9)
	KiB = 1 << 10
	MiB = 1 << 20
)

type write struct {
	at     sim.Time
	writer int32
	bytes  int64
	ioSize int64
	done   sim.Time // expected
}

// diskWriteCases are a disk's limits and writes to it, each with when it must be done.
var diskWriteCases = []struct {
	name   string
	lim    Limits
	writes []write
}{
	{
		name: "no limits: done at once, nothing queues",
		writes: []write{
			{at: 0, bytes: 8 * MiB, done: 0},
			{at: 0, bytes: 4 * KiB, done: 0},
			{at: 5 * ms, bytes: 1, ioSize: 1, done: 5 * ms},
		},
	},
	{
		// 8 MiB at 10 MB/s is 8388608/1e7 s; the 4 KiB write issued just after
		// waits for all of it, then takes 4096/1e7 s = 409.6 µs.
		name: "a big background write delays a small one by 0.8388608 s",
		lim:  Limits{Throughput: 10_000_000},
		writes: []write{
			{at: 0, writer: 0, bytes: 8 * MiB, done: 838_860_800},
			{at: 0, writer: 1, bytes: 4 * KiB, done: 838_860_800 + 409_600},
		},
	},
	{
		// 4 KiB random writes at 1,000 IOPS: 1 ms each, against 40.96 µs of
		// throughput at 100 MB/s, so the IOPS limit sets the pace.
		name: "small random writes are IOPS-bound",
		lim:  Limits{Throughput: 100_000_000, IOPS: 1000},
		writes: []write{
			{at: 0, bytes: 4 * KiB, ioSize: 4 * KiB, done: 1 * ms},
			{at: 0, bytes: 4 * KiB, ioSize: 4 * KiB, done: 2 * ms},
			{at: 0, bytes: 4 * KiB, ioSize: 4 * KiB, done: 3 * ms},
			// 64 KiB as 16 I/Os of 4 KiB: 16 ms.
			{at: 0, bytes: 64 * KiB, ioSize: 4 * KiB, done: 19 * ms},
			// After the queue drained: no wait.
			{at: 30 * ms, bytes: 4 * KiB, ioSize: 4 * KiB, done: 31 * ms},
		},
	},
	{
		// Merged by writeback (ioSize 0): 1 MiB is 4 operations of 256 KiB, 4 ms
		// at 1,000 IOPS, but 10.48576 ms at 100 MB/s: throughput-bound.
		name: "merged writes count bytes/unit operations",
		lim:  Limits{Throughput: 100_000_000, IOPS: 1000},
		writes: []write{
			{at: 0, bytes: MiB, done: 10_485_760},
		},
	},
	{
		// 100 KiB merged is 102400/262144 = 0.390625 operations: 390.625 µs.
		name: "merged writes may cost a fraction of an operation",
		lim:  Limits{IOPS: 1000},
		writes: []write{
			{at: 0, bytes: 100 * KiB, done: 390_625},
		},
	},
	{
		// EBS splits an I/O over 256 KiB: a 1 MiB I/O is 4 operations; two I/Os
		// of 300 KiB are 2 operations each.
		name: "large I/Os are split into units",
		lim:  Limits{IOPS: 1000},
		writes: []write{
			{at: 0, bytes: MiB, ioSize: MiB, done: 4 * ms},
			{at: 4 * ms, bytes: 600 * KiB, ioSize: 300 * KiB, done: 8 * ms},
			// 700 KiB in I/Os of 300 KiB: 2 + 2 + one of 100 KiB = 5.
			{at: 8 * ms, bytes: 700 * KiB, ioSize: 300 * KiB, done: 13 * ms},
		},
	},
	{
		// A smaller unit: 64 KiB merged at unit 16 KiB is 4 operations.
		name: "the I/O unit is configurable",
		lim:  Limits{IOPS: 1000, IOUnit: 16 * KiB},
		writes: []write{
			{at: 0, bytes: 64 * KiB, done: 4 * ms},
		},
	},
	{
		// 1 byte at 3 B/s is 333,333,333.3 ns: rounded up, never early.
		name: "service rounds up to the nanosecond",
		lim:  Limits{Throughput: 3},
		writes: []write{
			{at: 0, bytes: 1, done: 333_333_334},
		},
	},
	{
		// bytes × 1e9 exceeds int64 past 9.2 GB: 20 GB at 1 GB/s is 20 s.
		name: "large writes do not overflow",
		lim:  Limits{Throughput: 1_000_000_000},
		writes: []write{
			{at: 0, bytes: 20_000_000_000, done: 20 * sec},
		},
	},
}

func TestWrite(t *testing.T) {
	cases := diskWriteCases
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := New(c.lim)
			for i, w := range c.writes {
				if got := d.Write(w.at, w.writer, w.bytes, w.ioSize); got != w.done {
					t.Errorf("write %d: done %d, want %d", i, got, w.done)
				}
			}
		})
	}
}

func TestAccounting(t *testing.T) {
	d := New(Limits{Throughput: 10_000_000})
	// Writer 3 first: the per-writer table grows to it.
	d.Write(0, 3, 8*MiB, 0)               // 0 .. 838.8608 ms, no wait
	d.Write(100*ms, 1, 10_000, 0)         // waits 738.8608 ms, 1 ms
	d.Write(200*ms, 1, 10_000, 0)         // waits 639.8608 ms, 1 ms
	d.Write(2*sec, 3, 1_000_000, 1*MiB)   // idle again: no wait, 100 ms
	d.Write(2*sec+50*ms, 0, 20_000, 4096) // waits 50 ms, 2 ms

	want := Stats{
		Writes:  5,
		Bytes:   8*MiB + 10_000 + 10_000 + 1_000_000 + 20_000,
		Wait:    738_860_800 + 639_860_800 + 50*ms,
		MaxWait: 738_860_800,
	}
	if got := d.Total(); got != want {
		t.Errorf("total %+v, want %+v", got, want)
	}
	writers := map[int32]Stats{
		0: {Writes: 1, Bytes: 20_000, Wait: 50 * ms, MaxWait: 50 * ms},
		1: {Writes: 2, Bytes: 20_000, Wait: 738_860_800 + 639_860_800, MaxWait: 738_860_800},
		2: {},
		3: {Writes: 2, Bytes: 8*MiB + 1_000_000},
		9: {}, // never seen
	}
	for id, w := range writers {
		if got := d.Writer(id); got != w {
			t.Errorf("writer %d: %+v, want %+v", id, got, w)
		}
	}
}

func TestBusy(t *testing.T) {
	// A script in time order, as the engine runs: a write (bytes > 0) or a question.
	// 1 MB/s: 1,000 bytes take 1 ms.
	steps := []struct {
		now   sim.Time
		bytes int64
		busy  sim.Time // expected Busy(now) after the step
	}{
		{now: 0, busy: 0},
		{now: 0, bytes: 1_000_000, busy: 0}, // [0, 1 s)
		{now: 500 * ms, busy: 500 * ms},
		{now: 500 * ms, bytes: 500_000, busy: 500 * ms}, // queued: [1 s, 1.5 s)
		// Work queued for later is not counted before it happens.
		{now: 1 * sec, busy: 1 * sec},
		{now: 1200 * ms, busy: 1200 * ms},
		{now: 2 * sec, busy: 1500 * ms},
		{now: 3 * sec, bytes: 250_000, busy: 1500 * ms}, // [3 s, 3.25 s)
		{now: 3 * sec, bytes: 250_000, busy: 1500 * ms}, // [3.25 s, 3.5 s)
		{now: 3*sec + 100*ms, busy: 1600 * ms},
		{now: 3*sec + 400*ms, busy: 1900 * ms},
		{now: 10 * sec, busy: 2 * sec},
	}
	d := New(Limits{Throughput: 1_000_000})
	for i, s := range steps {
		if s.bytes > 0 {
			d.Write(s.now, 0, s.bytes, 0)
		}
		if got := d.Busy(s.now); got != s.busy {
			t.Errorf("step %d: Busy(%v s) = %v s, want %v s", i, s.now.Seconds(), got.Seconds(), s.busy.Seconds())
		}
	}
	f := New(Limits{Throughput: 1_000_000})
	f.Write(3*sec, 0, 500_000, 0)
	f.Write(3*sec, 0, 500_000, 0)
	if got := f.Free(3 * sec); got != 4*sec {
		t.Errorf("Free = %d, want 4 s", got)
	}
	if got := f.Free(5 * sec); got != 5*sec {
		t.Errorf("Free after the queue drained = %d, want now", got)
	}
	// An unlimited device is never busy.
	u := New(Limits{})
	u.Write(0, 0, 1_000_000, 0)
	if got := u.Busy(sec); got != 0 {
		t.Errorf("unlimited device busy %d", got)
	}
}

// One log write per request at 3,000 requests/s for a day is 2.6e8 writes: none may
// allocate once the writers are known.
func TestWriteAllocatesNothing(t *testing.T) {
	d := New(Limits{Throughput: 10_000_000, IOPS: 3000})
	d.Write(0, 7, 1, 0)
	now := sim.Time(0)
	allocs := testing.AllocsPerRun(1000, func() {
		now += us
		d.Write(now, int32(now/us%8), 240, 0)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per write", allocs)
	}
}

func BenchmarkWrite(b *testing.B) {
	d := New(Limits{Throughput: 10_000_000, IOPS: 3000})
	now := sim.Time(0)
	for i := 0; b.Loop(); i++ {
		now += 333 * us
		d.Write(now, int32(i&1), 240, 0)
	}
}

// A volume without limits never makes a write wait; either limit can.
func TestLimited(t *testing.T) {
	for _, c := range []struct {
		lim  Limits
		want bool
	}{{Limits{}, false}, {Limits{IOUnit: 4096}, false}, {Limits{Throughput: 1}, true}, {Limits{IOPS: 1}, true}} {
		if got := New(c.lim).Limited(); got != c.want {
			t.Errorf("%+v: Limited %v, want %v", c.lim, got, c.want)
		}
	}
}
