package mesh

import (
	"trafficlab/model/client"
	"trafficlab/sim"
)

// In: request ji reached a pod whose sidecar is envoy ei, on connection id (new:
// its first request); the worker of that connection takes it.
func (m *Mesh) In(ei, ji int32, id client.ConnID, newConn bool) {
	if newConn {
		m.Accept(ei, id)
	}
	*m.task(ji) = task{envoy: ei, worker: m.workerOf(id), stage: stageIn}
	m.enqueue(ei, m.tasks[ji].worker, ji)
}

// onLocalIn: the request crossed loopback from the sidecar to the app.
func (m *Mesh) onLocalIn(ev sim.Event) { m.apps.ToApp(ev.Obj, m.tasks[ev.Obj].newConn) }

// AppAnswered: the app answered inbound request ji; the answer crosses loopback to
// its sidecar.
func (m *Mesh) AppAnswered(ji int32) { m.k.After(m.cfg.Local, m.evLocalOut, ji, 0) }

// onLocalOut: the app's answer crossed loopback back to its sidecar.
func (m *Mesh) onLocalOut(ev sim.Event) {
	t := &m.tasks[ev.Obj]
	if m.envoys[t.envoy].stopped {
		m.apps.Closed(ev.Obj)
		return
	}
	m.envoys[t.envoy].workers[t.worker].appIdle++
	t.stage = stageOut
	m.enqueue(t.envoy, t.worker, ev.Obj)
}

// Stop ends inbound envoy ei with its pod: it appends to held the requests it held,
// on its CPU or queued for a worker, whose connections the pod's kernel closes.
func (m *Mesh) Stop(ei int32, held []int32) []int32 {
	x := &m.envoys[ei]
	x.stopped = true
	now := m.k.Now()
	held = x.grp.Abort(now, held)
	for w := range x.workers {
		wk := &x.workers[w]
		if wk.busy {
			wk.busy = false
			wk.busyNs += now - wk.since
		}
		for ji, ok := wk.queue.Pop(); ok; ji, ok = wk.queue.Pop() {
			held = append(held, ji)
		}
	}
	return held
}

// Remove takes envoy ei's container off its node; Stop emptied it when its pod
// exited.
func (m *Mesh) Remove(ei int32) { m.envoys[ei].grp.Remove() }
