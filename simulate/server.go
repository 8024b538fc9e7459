package simulate

import (
	"fmt"
	"slices"
	"time"

	"trafficlab/model/client"
	"trafficlab/model/netw"
	"trafficlab/model/node"
	"trafficlab/model/sidecar"
	"trafficlab/sim"
	"trafficlab/simulate/lifecycle"
)

func (e *Engine) newJob(j job) int32 {
	e.serial++
	j.serial = e.serial
	j.served = -1
	if len(e.freeJobs) == 0 && len(e.jobs) >= e.liveLimit {
		e.stop(e.overloaded())
	}
	return sim.Alloc(&e.jobs, &e.freeJobs, j)
}

// stop ends the run early for err, the first such reason.
func (e *Engine) stop(err error) {
	if e.err == nil {
		e.err = err
		e.k.Stop()
	}
}

// maxLiveRequests bounds the requests the pods and sidecars hold at once, and the
// requests open-loop clients keep outstanding (each about 450 B with its caller,
// connection and events: a 1,000,000/s open loop against one overloaded pod held
// 445 MB after a second), so that
// a run's memory is bounded: a job takes about 240 B live with its CPU share (a run
// that left a million requests at an overloaded pod held 240 MB of heap), and the
// process peaked at 0.91 GB resident when an overloaded run reached this bound (the
// garbage collector's headroom and the table's growth double it). Validation bounds what clients keep outstanding; what the pods keep depends on how
// fast they serve, which only the run tells. An open loop far beyond the pods'
// capacity reaches it: a request its client gave up on still waits at its pod, as
// an app that does not watch for the client's close runs it anyway.
const maxLiveRequests = 1_000_000

// overloaded is the error that stops a run at maxLiveRequests, naming the pod that
// holds most of them.
func (e *Engine) overloaded() error {
	held := make([]int, len(e.pods))
	for i := range e.jobs {
		if j := &e.jobs[i]; j.state != jobFree && j.pod >= 0 && int(j.pod) < len(held) {
			held[j.pod]++
		}
	}
	top := 0
	for i := range held {
		if held[i] > held[top] {
			top = i
		}
	}
	where, replicas := "", "spec.services[0].replicas"
	if len(held) > 0 && held[top] > 0 {
		where = fmt.Sprintf(", %d of them at pod %s", held[top], e.pods[top].name)
		replicas = fmt.Sprintf("spec.services[%d].replicas", e.pods[top].svc)
	}
	return fmt.Errorf("simulate: stopped at %s of simulated time: the pods hold %d requests%s, the most a run keeps in memory. "+
		"The clients offer far more than the pods serve, and requests their clients gave up on still wait at the pods; "+
		"lower the rate or add replicas (sweep --set %s=A..B --find \"min %s where timeout == 0\" tells how many)",
		time.Duration(e.k.Now()), len(e.jobs), where, replicas, replicas)
}

// outstanding is the error that stops a run when open-loop clients keep
// maxLiveRequests outstanding, naming the client pod that keeps most of them.
func (e *Engine) outstanding() error {
	// A service pod's callers are not the clients' open loops: their calls are
	// bounded by the requests the pods hold.
	top := 0
	for i := range e.cpods {
		if e.cpods[i].from < 0 && len(e.cpods[i].slots)-len(e.cpods[i].free) > len(e.cpods[top].slots)-len(e.cpods[top].free) {
			top = i
		}
	}
	open := e.openSlots
	for i := range e.cpods {
		if e.cpods[i].from < 0 {
			open -= len(e.cpods[i].free)
		}
	}
	where, maxInFlight := "", "spec.clients[0].maxInFlight"
	if len(e.cpods) > 0 {
		cp := &e.cpods[top]
		where = fmt.Sprintf(", %d of them in client pod %s", len(cp.slots)-len(cp.free), cp.name)
		maxInFlight = fmt.Sprintf("spec.clients[%d].maxInFlight", cp.dep)
	}
	return fmt.Errorf("simulate: stopped at %s of simulated time: the clients keep %d requests outstanding%s, the most a run keeps in memory. "+
		"They send far faster than the pods answer; lower the rate, add replicas, or cap what a client pod keeps outstanding with %s (as vegeta's -max-workers)",
		time.Duration(e.k.Now()), open, where, maxInFlight)
}

// Err is why the run stopped before its end, or nil.
func (e *Engine) Err() error { return e.err }

func (e *Engine) freeJob(id int32) {
	j := &e.jobs[id]
	if j.outbound {
		e.mesh.Free(id)
	}
	j.state = jobFree
	e.freeJobs = append(e.freeJobs, id)
}

// arrive: request ji reached its pod. A worker takes it, or it queues for one.
func (e *Engine) arrive(ji int32) {
	j := &e.jobs[ji]
	j.delivered = true
	p := &e.pods[j.pod]
	if e.appClosed(j.conn) {
		switch {
		case !e.multiplexed(j.conn, j.seq):
			// The app closed this connection as idle before the request came: the
			// kernel resets it.
			e.idleReset(ji)
			e.failJob(ji, errReset, e.hop+e.relay)
			return
		case e.refusedAfterGoAway(j.conn):
			// A stream opened after the second GOAWAY is refused, unprocessed; the
			// client sends it again (gRPC's transparent retry, RFC 9113 8.7).
			e.failJob(ji, errRefusedStream, e.hop+e.relay)
			return
		}
	}
	e.voidIdleTimer(j.conn) // the connection is busy, not idle
	switch e.life.Phase(j.pod) {
	case lifecycle.Running:
	case lifecycle.Gone:
		// No one answers; the client's timeout will.
		e.freeJob(ji)
		return
	case lifecycle.Draining:
		if e.multiplexed(j.conn, j.seq) {
			// HTTP/2: the draining server sent GOAWAY; a stream it did not process
			// is refused, and the client retries it on a new connection (RFC 9113
			// section 8.7: a refused request "can be retried").
			e.failJob(ji, errRefusedStream, e.hop+e.relay)
			return
		}
		fallthrough
	default:
		// A draining app closed this connection as idle (or never accepted it); an
		// exited one has no socket at all: the kernel resets it.
		e.failJob(ji, errReset, e.hop+e.relay)
		return
	}
	if j.newConn {
		p.connections++
		e.ageFrom(ji)
	}
	if p.envoy >= 0 {
		e.mesh.In(p.envoy, ji, j.conn, j.newConn)
		return
	}
	e.appArrive(ji)
}

// appArrive: request ji reached the app: a worker takes it, or it queues for one.
func (e *Engine) appArrive(ji int32) {
	j := &e.jobs[ji]
	j.mark = e.k.Now()
	p := &e.pods[j.pod]
	if e.life.Phase(j.pod) != lifecycle.Running {
		// The app behind a sidecar died meanwhile; the sidecar went with the pod.
		e.failJob(ji, errReset, e.hop+e.relay)
		return
	}
	if p.concurrency > 0 && p.busy >= p.concurrency {
		j.state = jobQueued
		p.queue.Push(ji)
		return
	}
	e.start(ji)
}

// start gives a worker to job ji: first its CPU work (plus the accept on a new
// connection), then its off-CPU wait.
func (e *Engine) start(ji int32) {
	j := &e.jobs[ji]
	p := &e.pods[j.pod]
	p.busy++
	now := e.k.Now()
	work := p.work.Sample(p.rng) + p.logCPU
	if j.newConn {
		work += p.acceptCost
	}
	j.wait = p.wait.Sample(p.rng)
	j.spent[partQueue] += int64(now - j.mark)
	if p.calls {
		e.startCalls(ji)
	}
	e.onCore(ji, work)
}

// onCore puts job ji on its pod's CPU for work ns.
func (e *Engine) onCore(ji int32, work int64) {
	j := &e.jobs[ji]
	p := &e.pods[j.pod]
	now := e.k.Now()
	j.state = jobCPU
	// Every request runs on its pod's CPU, however little work it draws (an
	// exponential draw under 1 ns truncates to 0): a container stalled by its quota
	// or starved of cores answers nothing until it runs again (CFS dequeues a
	// throttled group's tasks: kernel/sched/fair.c, throttle_cfs_rq).
	work = max(work, 1)
	j.spent[partWork] += work
	j.mark = now
	j.thr = p.grp.Throttled(now)
	p.grp.Start(now, ji, work)
}

// cpuChanged reschedules a pod's (or a sidecar's, with a negative ID) next CPU
// completion after its rate changed.
func (e *Engine) cpuChanged(g *node.Group) {
	if at, ok := g.Next(); ok {
		if e.backgrounds.CPUChanged(g, at) {
			return
		}
		if e.mesh.CPUChanged(g, at) {
			return
		}
		if e.clientCPUChanged(g, at) || e.proxyCPUChanged(g, at) {
			return
		}
		e.k.At(at, e.evCPU, g.ID, g.Gen)
	}
}

func (e *Engine) onCPU(ev sim.Event) {
	g := e.pods[ev.Obj].grp
	if ev.Gen != g.Gen {
		return // the pod's rate changed since; a newer event stands
	}
	now := e.k.Now()
	e.done = g.Finish(now, e.done[:0])
	throttled := g.Throttled(now)
	done := e.done
	if slices.ContainsFunc(done, func(ji int32) bool { return ji < 0 }) {
		done = e.callsWorked(done) // the calls' own CPU, which worked may add to
	}
	for _, ji := range done {
		// Beyond its own work, a request on CPU waited for cores others held or
		// stalled with its throttled container.
		j := &e.jobs[ji]
		stalled := int64(throttled - j.thr)
		j.spent[partThrottled] += stalled
		j.spent[partCPU] += max(0, int64(now-j.mark)-j.spent[partWork]-stalled)
		e.cpuDone(ji)
	}
}

func (e *Engine) cpuDone(ji int32) {
	if w := e.jobs[ji].wait; w > 0 {
		e.jobs[ji].state = jobWaiting
		e.jobs[ji].spent[partDependency] += w
		e.k.After(sim.Time(w), e.evWait, ji, 0)
		return
	}
	e.handled(ji)
}

// onWait: a request's off-CPU wait is over, unless its pod died meanwhile.
func (e *Engine) onWait(ev sim.Event) {
	if e.jobs[ev.Obj].state == jobDead {
		e.freeJob(ev.Obj)
		return
	}
	e.handled(ev.Obj)
}

// finish: the pod answers; its worker takes the next queued request. A draining pod
// answers with Connection: close and exits once nothing is left.
func (e *Engine) finish(ji int32) {
	j := &e.jobs[ji]
	p := &e.pods[j.pod]
	p.busy--
	p.requests++
	j.served = j.pod
	j.state = jobReply
	if e.graph {
		e.serviceAnswered(j)
	}
	j.closeAfter = e.life.Phase(j.pod) == lifecycle.Draining
	if p.envoy >= 0 {
		e.mesh.AppAnswered(ji)
	} else {
		e.idleFrom(ji)
		e.reply(ji)
	}
	if next, ok := p.queue.Pop(); ok {
		e.start(next)
		return
	}
	if e.life.Phase(j.pod) == lifecycle.Draining {
		e.life.Drained(j.pod)
	}
}

// resetEvent is how a reset from the pod reaches the client: directly, or in
// userspace mode as a plain close, because the proxy copying the bytes closes the
// client's side when its backend connection fails (pkg/proxy/userspace/proxysocket.go
// ProxyTCP and copyBytes).
func (e *Engine) resetEvent() uint8 {
	if e.relay > 0 {
		return e.evClosed
	}
	return e.evReset
}

// connFailed tells whoever sent job ji, after delay, that its connection failed with
// kind: the client app, or the outbound envoy whose attempt it is.
func (e *Engine) connFailed(ji int32, kind uint8, delay sim.Time) {
	j := &e.jobs[ji]
	if j.attempt {
		end := sidecar.Reset
		if kind == errRefusedStream {
			end = sidecar.RefusedStream
		}
		e.mesh.AttemptFailed(attemptOf(j), end, delay)
		return
	}
	ev := e.resetEvent()
	switch kind {
	case errClosed:
		ev = e.evClosed
	case errRefused:
		ev = e.evRefused
	case errRefusedStream:
		ev = e.evRefusedStream
	}
	e.k.After(delay, ev, j.slot, j.gen)
}

// failJob ends job ji, whose connection failed under it with kind: whoever sent it
// hears after delay (connFailed).
func (e *Engine) failJob(ji int32, kind uint8, delay sim.Time) {
	e.connFailed(ji, kind, delay)
	e.freeJob(ji)
}

// multiplexed tells whether connection id, as a job saw it (seq), is still open and
// carries HTTP/2.
func (e *Engine) multiplexed(id client.ConnID, seq uint32) bool {
	return e.connSeq[id] == seq && e.conns.Get(id).Open && e.pools[e.conns.Get(id).Pool].Streams > 0
}

// reply sends job ji's answer back on its connection. On the segment model an answer
// to a connection the client has closed goes nowhere.
func (e *Engine) reply(ji int32) {
	j := &e.jobs[ji]
	if e.net == nil {
		e.k.After(e.hop+e.relay, e.evResponse, ji, 0)
		return
	}
	if e.net.WasReset(ji, j.serial) {
		e.freeJob(ji) // RST_STREAM: the server drops the answer
		return
	}
	if e.connSeq[j.conn] != j.seq || !e.net.Wired(j.conn) {
		// The connection closed while the app worked: on HTTP/2 another stream's
		// failure may have taken it down under this one.
		e.failJob(ji, errReset, e.hop+e.relay)
		return
	}
	e.sendMessage(j.conn, netw.Down, 0, int64(e.services[e.pods[j.pod].svc].respBytes), ji)
}

// registerServers registers the event kinds of a pod's app events with the kernel.
func (e *Engine) registerServers() {
	e.evArrive = e.k.Register(e.onArrive)
	e.evCPU = e.k.Register(e.onCPU)
	e.evWait = e.k.Register(e.onWait)
	e.evAppIdle = e.k.Register(e.onAppIdle)
	e.evAppAge = e.k.Register(e.onAppAge)
	e.evAppAgeClose = e.k.Register(e.onAppAgeClose)
}

// onArrive: a request reached its pod.
func (e *Engine) onArrive(ev sim.Event) { e.arrive(ev.Obj) }
