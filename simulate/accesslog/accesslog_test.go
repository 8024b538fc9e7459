package accesslog

import (
	"slices"
	"testing"
	"time"

	"trafficlab/model/disk"
	"trafficlab/model/logpipe"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// apps notes the requests handed back, in order.
type apps struct {
	logged  []int32
	running bool
}

func (a *apps) Logged(job int32)   { a.logged = append(a.logged, job) }
func (a *apps) Running(int32) bool { return a.running }
func ptr[T any](v T) *T            { return &v }
func logs(sync bool) *scenario.AccessLog {
	return &scenario.AccessLog{Bytes: ptr(int64(1024)), Sync: ptr(sync), BufferBytes: ptr(int64(logpipe.ZapBufferSize))}
}

// TestBlockedLinesGoOnInOrder writes 1 MiB of 1 KiB lines at once into a path to
// a disk that takes 100 KiB/s: the path holds far less than 1 MiB
// (logpipe.RuntimeCapacity), so lines block; each blocked request is handed back
// once, in the order it wrote, and after 1 MiB / 100 KiB/s (about 11 s with the
// lines' CRI prefixes) the disk has every line.
func TestBlockedLinesGoOnInOrder(t *testing.T) {
	k := sim.New()
	a := &apps{running: true}
	ps := New(k, a)
	d := disk.New(disk.Limits{Throughput: 100 << 10})
	if !ps.Open(3, logs(true), d, func() int32 { return 0 }) {
		t.Fatal("a limited disk gets no path")
	}
	var blocked []int32
	for job := int32(0); job < 1024; job++ {
		if !ps.Write(3, job) {
			blocked = append(blocked, job)
		}
	}
	if len(blocked) == 0 || blocked[0] == 0 {
		t.Fatalf("blocked %d lines, the first among them: want some, not the first", len(blocked))
	}
	// In 1 s the disk takes 100 KiB, far less than the 1 MiB less what the path
	// holds that must be written before the last line goes in.
	k.Run(sim.Duration(time.Second))
	if len(a.logged) == len(blocked) {
		t.Errorf("all %d blocked lines went on within 1 s", len(blocked))
	}
	k.Run(sim.Duration(12 * time.Second))
	if !slices.Equal(a.logged, blocked) {
		t.Errorf("handed back %d lines (first %v), want the %d blocked in order", len(a.logged), a.logged[:min(3, len(a.logged))], len(blocked))
	}
	if st := ps.Stats(3); st.Lines != 1024 || st.Blocked != int64(len(blocked)) {
		t.Errorf("stats %+v: want 1024 lines written, %d blocked", st, len(blocked))
	}
	if got := d.Writer(0).Bytes; got != logpipe.FileBytes(1024*1024, 1024) {
		t.Errorf("disk got %d bytes, want %d", got, logpipe.FileBytes(1024*1024, 1024))
	}
}

// TestNoPathWhereWritesNeverWait: no access log, or a disk without limits, means no
// path; a dead pod's buffered path stops its flush timer.
func TestNoPathWhereWritesNeverWait(t *testing.T) {
	k := sim.New()
	a := &apps{running: true}
	ps := New(k, a)
	never := func() int32 { t.Fatal("a writer made for a path that was not opened"); return 0 }
	if ps.Open(0, nil, disk.New(disk.Limits{IOPS: 10}), never) || ps.Open(1, logs(true), disk.New(disk.Limits{}), never) ||
		ps.Open(2, logs(true), nil, never) {
		t.Error("a path was opened where writes never wait")
	}
	if ps.Has(0) || ps.Has(1) || ps.Has(2) || ps.Drop(1, nil) != nil {
		t.Error("a pod without a path has one")
	}
	if !ps.Open(4, logs(false), disk.New(disk.Limits{IOPS: 10}), func() int32 { return 0 }) {
		t.Fatal("no buffered path on a limited disk")
	}
	a.running = false
	k.Run(sim.Duration(time.Minute))
	if k.Pending() != 0 {
		t.Errorf("%d events left after the pod died: the flush timer goes on", k.Pending())
	}
}
