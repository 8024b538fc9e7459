package mesh

import "trafficlab/sim"

// enqueue gives request ji's current stage to worker w of envoy ei.
func (m *Mesh) enqueue(ei int32, w int16, ji int32) {
	wk := &m.envoys[ei].workers[w]
	if wk.busy {
		wk.queue.Push(ji)
		return
	}
	m.runTask(ei, w, ji)
}

func (m *Mesh) runTask(ei int32, w int16, ji int32) {
	x := &m.envoys[ei]
	wk := &x.workers[w]
	wk.busy = true
	wk.since = m.k.Now()
	if x.half == 0 {
		m.taskDone(ei, ji)
		return
	}
	x.grp.Start(m.k.Now(), ji, x.half)
}

// onCPU: a worker's task finished on the CPU.
func (m *Mesh) onCPU(ev sim.Event) {
	g := m.envoys[ev.Obj].grp
	if ev.Gen != g.Gen {
		return
	}
	m.done = g.Finish(m.k.Now(), m.done[:0])
	// taskDone may start tasks that finish in the same instant; work on a copy.
	done := append(m.doneCopy[:0], m.done...)
	for _, ji := range done {
		m.taskDone(ev.Obj, ji)
	}
	m.doneCopy = done
}

// taskDone: the worker of request ji finished its stage; it takes its next task.
func (m *Mesh) taskDone(ei, ji int32) {
	x := &m.envoys[ei]
	t := &m.tasks[ji]
	w := t.worker
	wk := &x.workers[w]
	now := m.k.Now()
	wk.busy = false
	wk.busyNs += now - wk.since
	switch {
	case !t.out && t.stage == stageIn:
		x.requests++
		t.newConn = wk.appIdle == 0
		if !t.newConn {
			wk.appIdle--
		}
		m.k.After(m.loopback(t.newConn), m.evLocalIn, ji, 0)
	case !t.out:
		m.apps.Reply(ji)
	case t.stage == stageIn:
		x.requests++
		m.route(ji)
	default:
		m.apps.Answer(ji)
	}
	for !wk.busy {
		next, ok := wk.queue.Pop()
		if !ok {
			break
		}
		if m.tasks[next].out && !m.awaited(next) {
			m.apps.Free(next)
			continue
		}
		m.runTask(ei, w, next)
	}
}

// loopback is the delay of a message over loopback, with the handshake on a new
// connection.
func (m *Mesh) loopback(newConn bool) sim.Time {
	if newConn {
		return 3 * m.cfg.Local
	}
	return m.cfg.Local
}
