package simulate

import (
	"trafficlab/model/disk"
	"trafficlab/scenario"
	"trafficlab/simulate/lifecycle"
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
	e.logs.Open(id, a, e.nodes[p.node].disk, func() int32 { return e.addWriter(p.node, p.name+" logs", false) })
}

// handled: job ji's handler returned; its access-log line is written before the
// answer leaves, as chi's and zap's request loggers do.
func (e *Engine) handled(ji int32) {
	pod := e.jobs[ji].pod
	if e.pods[pod].calls && e.callsNext(ji) {
		return
	}
	if !e.logs.Has(pod) || e.logs.Write(pod, ji) {
		e.finish(ji)
		return
	}
	j := &e.jobs[ji]
	j.state = jobLogging
	j.mark = e.k.Now()
}

// podApps are the pods' apps as the access-log paths see them (accesslog.Apps).
type podApps struct{ e *Engine }

// Logged: a request blocked on its log line goes on; the wait counts as disk time.
func (a podApps) Logged(ji int32) {
	j := &a.e.jobs[ji]
	j.spent[partDisk] += int64(a.e.k.Now() - j.mark)
	a.e.finish(ji)
}

func (a podApps) Running(pod int32) bool { return a.e.life.Phase(pod) < lifecycle.Exited }
