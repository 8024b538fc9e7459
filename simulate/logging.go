package simulate

import (
	"trafficlab/model/disk"
	"trafficlab/model/logpipe"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// A request's access-log line goes through its pod's stdout path to the node's disk
// (model/logpipe). On a node whose disk has no limits a write never waits, and the
// path is not modelled at all: no events for nothing.

// newDisk is a node pool's disk, or nil when writes never wait.
func newDisk(d *scenario.Disk) *disk.Device {
	if d == nil || (d.WriteBytesPerSecond == nil && d.IOPS == 0) {
		return nil
	}
	lim := disk.Limits{IOPS: d.IOPS}
	if d.WriteBytesPerSecond != nil {
		lim.Throughput = d.WriteBytesPerSecond.Value()
	}
	return disk.New(lim)
}

// addWriter registers a writer to node n's disk, named for the report, and returns
// its id.
func (e *Engine) addWriter(n int32, name string, background bool) int32 {
	node := &e.nodes[n]
	node.writers = append(node.writers, diskWriter{name, background})
	return int32(len(node.writers) - 1)
}

// openLog gives pod id its stdout path when it logs and its node's disk can be slow.
func (e *Engine) openLog(id int32) {
	p := &e.pods[id]
	a := e.services[p.svc].spec.Pod.AccessLog
	if d := e.nodes[p.node].disk; a == nil || d == nil || !d.Limited() {
		return
	}
	c := logpipe.Config{}
	if !*a.Sync {
		c.Buffer = *a.BufferBytes
		// zap's BufferedWriteSyncer flushes on a timer as well as when full.
		e.k.After(logpipe.ZapFlushInterval, e.evLogFlush, id, 0)
	}
	p.logs = logpipe.New(c)
	p.logBytes = *a.Bytes
	p.logWriter = e.addWriter(p.node, p.name+" logs", false)
}

// handled: job ji's handler returned; its access-log line is written before the
// answer leaves, as chi's and zap's request loggers do.
func (e *Engine) handled(ji int32) {
	p := &e.pods[e.jobs[ji].pod]
	if p.logs == nil {
		e.finish(ji)
		return
	}
	now := e.k.Now()
	ok := p.logs.Write(now, ji, p.logBytes)
	e.logTake(e.jobs[ji].pod)
	if ok {
		e.finish(ji)
		return
	}
	j := &e.jobs[ji]
	j.state = jobLogging
	j.mark = now
}

// logTake starts the runtime's next write of pod id's log lines to the disk, if it
// is idle and lines wait.
func (e *Engine) logTake(id int32) {
	p := &e.pods[id]
	bytes, lines, ok := p.logs.Take()
	if !ok {
		return
	}
	n := &e.nodes[p.node]
	done := n.disk.Write(e.k.Now(), p.logWriter, logpipe.FileBytes(bytes, lines), 0)
	e.k.At(done, e.evLogWritten, id, 0)
}

// onLogWritten: the runtime's write reached the disk; the path has room again and the
// requests blocked on it go on.
func (e *Engine) onLogWritten(ev sim.Event) {
	p := &e.pods[ev.Obj]
	now := e.k.Now()
	e.resumed = p.logs.Written(now, e.resumed[:0])
	for _, ji := range e.resumed {
		j := &e.jobs[ji]
		j.spent[partDisk] += int64(now - j.mark)
		e.finish(ji)
	}
	e.logTake(ev.Obj)
}

// onLogFlush: zap's BufferedWriteSyncer timer, while the app runs.
func (e *Engine) onLogFlush(ev sim.Event) {
	p := &e.pods[ev.Obj]
	if p.phase >= podExited {
		return
	}
	p.logs.Flush()
	e.logTake(ev.Obj)
	e.k.After(logpipe.ZapFlushInterval, e.evLogFlush, ev.Obj, 0)
}

// registerLogging registers the event kinds of access logging events with the kernel.
func (e *Engine) registerLogging() {
	e.evLogWritten = e.k.Register(e.onLogWritten)
	e.evLogFlush = e.k.Register(e.onLogFlush)
}
