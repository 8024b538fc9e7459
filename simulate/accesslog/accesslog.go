// Package accesslog is the simulator's access-logging subsystem: each logging
// pod's stdout path to its node's disk (model/logpipe: the pipe, the runtime's
// writes, zap's buffer and its flush timer). A request's access-log line is written
// before its answer leaves, as chi's and zap's request loggers do; a line that
// finds the path full blocks the request until the disk has taken enough. It owns
// the paths and their timers; it hands requests back to the pods' apps through Apps.
//
// On a node whose disk has no limits a write never waits, and the path is not
// modelled at all: no events for nothing.
package accesslog

import (
	"trafficlab/model/disk"
	"trafficlab/model/logpipe"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// Apps are the pods' apps whose requests the paths block and release.
type Apps interface {
	// Logged: blocked request job's line is in the path now; the request goes on.
	Logged(job int32)
	// Running tells whether pod's process still runs.
	Running(pod int32) bool
}

// path is one pod's stdout path.
type path struct {
	pipe   *logpipe.Pipe
	disk   *disk.Device
	writer int32 // its writer on disk
	bytes  int64 // an access-log line
}

// Paths are the pods' stdout paths, by pod ID; nil where a pod's writes never wait.
type Paths struct {
	kernel             *sim.Kernel
	apps               Apps
	paths              []*path
	resumed            []int32 // scratch
	evWritten, evFlush uint8
}

// New registers the paths' events with k.
func New(k *sim.Kernel, apps Apps) *Paths {
	p := &Paths{kernel: k, apps: apps}
	p.evWritten = k.Register(p.onWritten)
	p.evFlush = k.Register(p.onFlush)
	return p
}

// Open gives pod its stdout path when it logs (a non-nil a) and its node's disk d
// can be slow; writer is its writer on d. It reports whether it did.
func (ps *Paths) Open(pod int32, a *scenario.AccessLog, d *disk.Device, writer func() int32) bool {
	if a == nil || d == nil || !d.Limited() {
		return false
	}
	c := logpipe.Config{}
	if !*a.Sync {
		c.Buffer = *a.BufferBytes
		// zap's BufferedWriteSyncer flushes on a timer as well as when full.
		ps.kernel.After(logpipe.ZapFlushInterval, ps.evFlush, pod, 0)
	}
	for int(pod) >= len(ps.paths) {
		ps.paths = append(ps.paths, nil)
	}
	ps.paths[pod] = &path{pipe: logpipe.New(c), disk: d, writer: writer(), bytes: *a.Bytes}
	return true
}

// Has tells whether pod has a path: whether its lines can wait.
func (ps *Paths) Has(pod int32) bool { return int(pod) < len(ps.paths) && ps.paths[pod] != nil }

// Stats are pod's path's counters; pod must have one.
func (ps *Paths) Stats(pod int32) logpipe.Stats { return ps.paths[pod].pipe.Stats() }

// Write puts request job's line into pod's path, and reports whether it went in at
// once; if not, the request is blocked until Apps.Logged.
func (ps *Paths) Write(pod, job int32) bool {
	ok := ps.paths[pod].pipe.Write(ps.kernel.Now(), job, ps.paths[pod].bytes)
	ps.take(pod)
	return ok
}

// Drop empties pod's path when its process dies, and appends the requests that
// were blocked on it to into: their lines never reach the pipe.
func (ps *Paths) Drop(pod int32, into []int32) []int32 {
	if !ps.Has(pod) {
		return into
	}
	return ps.paths[pod].pipe.Drop(into)
}

// take starts the runtime's next write of pod's log lines to the disk, if it is
// idle and lines wait.
func (ps *Paths) take(pod int32) {
	p := ps.paths[pod]
	bytes, lines, ok := p.pipe.Take()
	if !ok {
		return
	}
	done := p.disk.Write(ps.kernel.Now(), p.writer, logpipe.FileBytes(bytes, lines), 0)
	ps.kernel.At(done, ps.evWritten, pod, 0)
}

// onWritten: the runtime's write reached the disk; the path has room again and the
// requests blocked on it go on.
func (ps *Paths) onWritten(ev sim.Event) {
	ps.resumed = ps.paths[ev.Obj].pipe.Written(ps.kernel.Now(), ps.resumed[:0])
	for _, job := range ps.resumed {
		ps.apps.Logged(job)
	}
	ps.take(ev.Obj)
}

// onFlush: zap's BufferedWriteSyncer timer, while the app runs.
func (ps *Paths) onFlush(ev sim.Event) {
	if !ps.apps.Running(ev.Obj) {
		return
	}
	ps.paths[ev.Obj].pipe.Flush()
	ps.take(ev.Obj)
	ps.kernel.After(logpipe.ZapFlushInterval, ps.evFlush, ev.Obj, 0)
}
