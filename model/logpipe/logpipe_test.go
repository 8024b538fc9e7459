package logpipe

import (
	"slices"
	"testing"
	"time"

	"trafficlab/model/disk"
	"trafficlab/sim"
)

// op is one step of a script: the app writes a line, the runtime's writer takes a batch,
// its disk write completes, the logger's timer flushes, or a check of the state.
type op struct {
	kind    byte // 'w' Write, 't' Take, 'd' Written, 'f' Flush, 'c' check
	at      sim.Time
	job     int32
	bytes   int64
	lines   int64
	ok      bool
	admit   []int32
	held    int64
	waiting int
}

func w(at sim.Time, job int32, bytes int64, ok bool) op {
	return op{kind: 'w', at: at, job: job, bytes: bytes, ok: ok}
}
func take(bytes, lines int64, ok bool) op {
	return op{kind: 't', bytes: bytes, lines: lines, ok: ok}
}
func done(at sim.Time, admit ...int32) op { return op{kind: 'd', at: at, admit: admit} }
func flush() op                           { return op{kind: 'f'} }
func check(held int64, waiting int) op    { return op{kind: 'c', held: held, waiting: waiting} }

func run(t *testing.T, p *Pipe, script []op) {
	t.Helper()
	for i, o := range script {
		switch o.kind {
		case 'w':
			if got := p.Write(o.at, o.job, o.bytes); got != o.ok {
				t.Errorf("op %d: Write(job %d, %d B) = %v, want %v", i, o.job, o.bytes, got, o.ok)
			}
		case 't':
			b, l, ok := p.Take()
			if b != o.bytes || l != o.lines || ok != o.ok {
				t.Errorf("op %d: Take = %d B, %d lines, %v; want %d, %d, %v", i, b, l, ok, o.bytes, o.lines, o.ok)
			}
		case 'd':
			if got := p.Written(o.at, nil); !slices.Equal(got, o.admit) {
				t.Errorf("op %d: Written admitted %v, want %v", i, got, o.admit)
			}
		case 'f':
			p.Flush()
		case 'c':
			if p.Held() != o.held || p.Waiting() != o.waiting {
				t.Errorf("op %d: held %d B with %d waiting, want %d B, %d", i, p.Held(), p.Waiting(), o.held, o.waiting)
			}
		}
	}
}

// pipeCases are pipes and scripts of writes and flushes, with what each pipe must hold
// and keep waiting along the way.
var pipeCases = []struct {
	name   string
	cfg    Config
	script []op
}{
	{
		name: "lines that fit never block",
		cfg:  Config{Runtime: 8192, ReadSize: 4096},
		script: []op{
			w(0, 1, 4096, true),
			w(0, 2, 4096, true), // exactly full
			check(8192, 0),
			w(0, 3, 1, false),
		},
	},
	{
		// 4000 + 4000 + 3000 > 10,000: job 3 blocks; jobs 4 and 5 would fit but
		// wait behind it, as zap's mutex makes them.
		name: "a full pipe blocks the writer and every later one in order",
		cfg:  Config{Runtime: 10_000, ReadSize: 4096},
		script: []op{
			w(0, 1, 4000, true),
			w(0, 2, 4000, true),
			w(1, 3, 3000, false),
			w(2, 4, 100, false),
			w(3, 5, 1, false),
			check(8000, 3),
		},
	},
	{
		// The writer takes one 4000-byte line (two exceed 4096). When it is
		// written, 4000 bytes are held: job 3 (8000) and job 4 (10,000) fit, job 5
		// (10,100) does not and waits for the next write.
		name: "Written admits exactly the jobs that fit, in order",
		cfg:  Config{Runtime: 10_000, ReadSize: 4096},
		script: []op{
			w(0, 1, 4000, true),
			w(0, 2, 4000, true),
			w(1, 3, 4000, false),
			w(2, 4, 2000, false),
			w(3, 5, 100, false),
			take(4000, 1, true),
			check(8000, 3),
			done(10, 3, 4),
			check(10_000, 1),
			take(4000, 1, true),
			done(20, 5),
			check(6100, 0),
		},
	},
	{
		name: "Take only when the writer is idle and a line is queued",
		cfg:  Config{},
		script: []op{
			take(0, 0, false),
			w(0, 1, 100, true),
			take(100, 1, true),
			w(0, 2, 200, true),
			take(0, 0, false), // busy
			done(5),
			take(200, 1, true),
			done(6),
			take(0, 0, false),
			check(0, 0),
		},
	},
	{
		// Five 1000-byte lines, read size 4096: four fit in a batch.
		name: "the writer takes whole lines up to its read size",
		cfg:  Config{ReadSize: 4096},
		script: []op{
			w(0, 1, 1000, true), w(0, 2, 1000, true), w(0, 3, 1000, true),
			w(0, 4, 1000, true), w(0, 5, 1000, true),
			take(4000, 4, true),
			done(1),
			take(1000, 1, true),
		},
	},
	{
		// Buffer 8192, path 8192, lines of 4096. Job 3 does not fit the buffer:
		// zap flushes it, the empty path takes all 8192 bytes, and job 3 goes in.
		// Job 5 finds the path full: the flush moves nothing and blocks, and job 6
		// waits behind it. Each completed write lets the flush go on; when it is
		// over, jobs 5 and 6 go into the empty buffer.
		name: "buffered: a write that does not fit flushes, and blocks until the flush is done",
		cfg:  Config{Buffer: 8192, Runtime: 8192, ReadSize: 4096},
		script: []op{
			w(0, 1, 4096, true),
			w(0, 2, 4096, true),
			take(0, 0, false), // the lines are in the app's buffer, not the pipe
			w(0, 3, 4096, true),
			check(12_288, 0),
			take(4096, 1, true),
			w(0, 4, 4096, true),
			w(1, 5, 4096, false),
			w(2, 6, 1, false),
			check(16_384, 2),
			done(10), // the flush moves 4096 of 8192
			take(4096, 1, true),
			done(20, 5, 6), // the flush moves the rest: over
			check(8192+4097, 0),
		},
	},
	{
		// Lines of 3000 into a 4096-byte path: the flush moves line 1 and 1096 bytes
		// of line 2. The writer takes only the whole line.
		name: "buffered: the writer never takes part of a line",
		cfg:  Config{Buffer: 8192, Runtime: 4096, ReadSize: 4096},
		script: []op{
			w(0, 1, 3000, true),
			w(0, 2, 3000, true),
			w(0, 3, 3000, false),
			take(3000, 1, true),
			done(7, 3),
			take(3000, 1, true),
		},
	},
	{
		name: "buffered: the timer's flush makes lines visible to the writer",
		cfg:  Config{Buffer: 8192, Runtime: 8192},
		script: []op{
			w(0, 1, 4000, true),
			take(0, 0, false),
			flush(),
			take(4000, 1, true),
			flush(), // nothing buffered: no-op
			take(0, 0, false),
			done(1),
			check(0, 0),
		},
	},
	{
		// The timer's flush finds the path full: it holds the mutex, so a write
		// that would fit the buffer waits until the flush is over.
		name: "buffered: writes wait behind a blocked timer flush",
		cfg:  Config{Buffer: 8192, Runtime: 4096, ReadSize: 4096},
		script: []op{
			w(0, 1, 4096, true),
			flush(),
			take(4096, 1, true),
			w(0, 2, 4096, true),
			flush(), // the path is full: blocked
			w(1, 3, 10, false),
			done(5, 3),
			take(4096, 1, true),
		},
	},
	{
		name: "synchronous logging: Flush does nothing",
		cfg:  Config{Runtime: 4096},
		script: []op{
			w(0, 1, 4096, true),
			flush(),
			w(0, 2, 1, false),
			check(4096, 1),
		},
	},
}

func TestPipe(t *testing.T) {
	cases := pipeCases
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { run(t, New(c.cfg), c.script) })
	}
}

// Without a writer draining it, how many 200-byte lines go in before one blocks.
func TestCapacity(t *testing.T) {
	cases := []struct {
		name     string
		cfg      Config
		flushAt  int // the timer flushes before this line; 0: never
		accepted int
	}{
		// 172,032 / 200 = 860.16.
		{name: "synchronous: the runtime's path", cfg: Config{}, accepted: 860},
		// 262,144 / 200 = 1310.72 lines fit the buffer; the 1311th flushes 262,000
		// bytes into a 172,032-byte path, which blocks: buffering does not add the
		// path's room, because the flush must go in whole.
		{name: "buffered: the app's buffer", cfg: Config{Buffer: ZapBufferSize}, accepted: 1310},
		// After the timer moved 500 lines (100,000 bytes) to the path, the buffer takes
		// 1310 more; their flush does not fit the 72,032 bytes left.
		{name: "buffered, flushed by the timer", cfg: Config{Buffer: ZapBufferSize}, flushAt: 500, accepted: 1810},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := New(c.cfg)
			n := 0
			for ; n < 10_000; n++ {
				if n == c.flushAt && n > 0 {
					p.Flush()
				}
				if !p.Write(0, int32(n), 200) {
					break
				}
			}
			if n != c.accepted {
				t.Errorf("%d lines went in, want %d", n, c.accepted)
			}
		})
	}
	if RuntimeCapacity != 172_032 {
		t.Errorf("RuntimeCapacity = %d", RuntimeCapacity)
	}
}

func TestPrefix(t *testing.T) {
	// The CRI log format's example (kubelet, pkg/kubelet/kuberuntime/logs/logs.go,
	// parseCRILog), as containerd writes it: timestamp, stream, tag, each followed by a
	// space.
	ts := time.Date(2016, 10, 6, 0, 17, 9, 669794202, time.UTC).Format(time.RFC3339Nano)
	if prefix := ts + " stdout F "; len(prefix) != PrefixBytes || prefix != "2016-10-06T00:17:09.669794202Z stdout F " {
		t.Errorf("prefix %q is %d bytes, PrefixBytes %d", prefix, len(prefix), PrefixBytes)
	}
	// The prefix is counted per line on the disk: a batch of 163 lines of 200 bytes is
	// 32,600 + 163 × 40 = 39,120 bytes, 3.912 ms at 10 MB/s.
	p := New(Config{})
	for i := range 200 {
		p.Write(0, int32(i), 200)
	}
	b, l, _ := p.Take()
	if b != 32_600 || l != 163 || FileBytes(b, l) != 39_120 {
		t.Fatalf("batch %d B, %d lines, %d B to the file", b, l, FileBytes(b, l))
	}
	d := disk.New(disk.Limits{Throughput: 10_000_000})
	if done := d.Write(0, 0, FileBytes(b, l), 0); done != 3_912_000 {
		t.Errorf("batch written at %d, want 3.912 ms", done)
	}
	p.Written(3_912_000, nil)
	if s := p.Stats(); s.Bytes != 32_600 || s.Lines != 163 {
		t.Errorf("stats %+v", s)
	}
}

func TestBlockedTime(t *testing.T) {
	// The script of "Written admits exactly the jobs that fit": jobs 3, 4, 5 blocked at
	// 1, 2, 3 ns, resumed at 10, 10, 20: 9 + 8 + 17 ns.
	p := New(Config{Runtime: 10_000, ReadSize: 4096})
	run(t, p, []op{
		w(0, 1, 4000, true), w(0, 2, 4000, true),
		w(1, 3, 4000, false), w(2, 4, 2000, false), w(3, 5, 100, false),
		take(4000, 1, true), done(10, 3, 4), take(4000, 1, true), done(20, 5),
	})
	want := Stats{Bytes: 8000, Lines: 2, Blocked: 3, BlockedTime: 34, MaxBlocked: 17}
	if got := p.Stats(); got != want {
		t.Errorf("stats %+v, want %+v", got, want)
	}
}

func TestMisuse(t *testing.T) {
	cases := []struct {
		name string
		f    func()
	}{
		{"empty line", func() { New(Config{}).Write(0, 0, 0) }},
		{"line over PIPE_BUF", func() { New(Config{}).Write(0, 0, PipeBuf+1) }},
		{"Written without Take", func() { New(Config{}).Written(0, nil) }},
		{"path below PIPE_BUF", func() { New(Config{Runtime: 100}) }},
		{"buffer below PIPE_BUF", func() { New(Config{Buffer: 100}) }},
		{"read size below PIPE_BUF", func() { New(Config{ReadSize: 100}) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			c.f()
		})
	}
}

// The steady cycle, once the queues have grown, allocates nothing.
func TestNoAllocation(t *testing.T) {
	p := New(Config{Runtime: 8192})
	out := make([]int32, 0, 16)
	job := int32(0)
	cycle := func() {
		for p.Write(0, job, 300) {
			job++
		}
		job++
		p.Take()
		out = p.Written(0, out[:0])
		p.Take()
		p.Written(0, out[:0])
	}
	cycle()
	if a := testing.AllocsPerRun(1000, cycle); a != 0 {
		t.Errorf("%v allocations per cycle", a)
	}
}

// A dying app's blocked writes never reach the pipe: Drop hands back their jobs in
// order, and the runtime's next write admits no one.
func TestDropForgetsBlockedWriters(t *testing.T) {
	p := New(Config{})
	line := int64(4096)
	n := int32(RuntimeCapacity / line) // 42 lines fill the path
	for j := int32(0); j < n; j++ {
		if !p.Write(0, j, line) {
			t.Fatalf("line %d blocked in an empty path", j)
		}
	}
	for j := n; j < n+3; j++ {
		if p.Write(0, j, line) {
			t.Fatalf("line %d fit a full path", j)
		}
	}
	if got := p.Drop(nil); len(got) != 3 || got[0] != n || got[2] != n+2 {
		t.Fatalf("Drop returned %v, want [%d %d %d]", got, n, n+1, n+2)
	}
	if _, _, ok := p.Take(); !ok {
		t.Fatal("nothing to take")
	}
	if got := p.Written(1, nil); len(got) != 0 || p.Waiting() != 0 {
		t.Errorf("Written resumed %v with %d waiting, want none", got, p.Waiting())
	}
}
