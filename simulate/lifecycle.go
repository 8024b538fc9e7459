package simulate

import (
	"trafficlab/placement"
	"trafficlab/sim"
	"trafficlab/simulate/lifecycle"
)

// createPod adds a replica of template revision rev to service si, named name, and
// has the scheduler place it. It returns the pod's id, or -1 when no node could
// take it: the pod then waits Pending and reason says why.
func (e *Engine) createPod(si, rev int32) (name string, id int32, reason string) {
	svc := &e.services[si]
	name = placement.Name(svc.name, svc.created)
	svc.created++
	id, reason = e.life.Create(si, rev, name)
	return name, id, reason
}

// podCluster is what the lifecycle subsystem asks of the Engine's pods and apps
// (lifecycle.Cluster).
type podCluster struct{ e *Engine }

// Bind places pending pod pp on a node and sets up its app, CPU, log path and
// sidecar there.
func (c podCluster) Bind(pp *lifecycle.Pending) (int32, string) {
	e := c.e
	node, err := e.sched.Schedule(placement.ServicePod(e.services[pp.Svc].spec, pp.Name))
	if err != nil {
		return -1, placement.Unschedulable(pp.Name, err).Error()
	}
	si := pp.Svc
	svc := &e.services[si]
	id := int32(len(e.pods))
	n := int32(node)
	p := pod{
		name: pp.Name, uid: pp.UID, svc: si, revision: pp.Revision, node: n, concurrency: svc.spec.Pod.Concurrency,
		work: svc.work, wait: svc.wait, acceptCost: int64(svc.spec.Pod.AcceptCost.Duration), rng: pp.RNG,
		calls: len(svc.spec.Pod.Calls) > 0,
	}
	p.envoy = -1
	p.logCPU = int64(svc.logCPU)
	p.grp = e.nodes[n].cpu.AddGroup(id, svc.weight, e.limitQuota(svc.limit, "pod/"+pp.Name))
	e.nodes[n].pods++
	e.pods = append(e.pods, p)
	svc.pods = append(svc.pods, id)
	e.openLog(id)
	if svc.spec.Sidecar != nil {
		e.pods[id].envoy = e.mesh.Add(svc.spec.Sidecar, true, id, n, pp.Name)
	}
	return id, ""
}

func (c podCluster) StartupDelay(id int32) sim.Time {
	p := &c.e.pods[id]
	return sim.Time(c.e.services[p.svc].startup.Sample(p.rng))
}

func (c podCluster) Terminating(id int32) { c.e.routing.Changed(c.e.pods[id].svc) }

func (c podCluster) ReadyChanged(id int32, ready bool) {
	e := c.e
	si := e.pods[id].svc
	e.routing.Changed(si)
	if ready {
		e.deployments.Changed(si, e.deployments.MinReady(si))
	}
}

func (c podCluster) Idle(id int32) bool {
	p := &c.e.pods[id]
	return p.busy == 0 && p.queue.Len() == 0
}

// Exited: the pod's process ended and the kernel closed its sockets: a connection
// whose request the app had read gets a FIN (the client reads EOF before any
// answer); one whose request was still unread in the socket gets a reset.
func (c podCluster) Exited(id int32) {
	e := c.e
	p := &e.pods[id]
	now := e.k.Now()
	back := e.hop + e.relay
	e.done = p.grp.Abort(now, e.done[:0])
	for _, ji := range e.done {
		if ji < 0 {
			e.cpuTasks.take(-ji - 1) // a call being built: its slot goes with the pod's calls
			continue
		}
		e.failJob(ji, errClosed, back)
	}
	for ji, ok := p.queue.Pop(); ok; ji, ok = p.queue.Pop() {
		e.failJob(ji, errReset, back)
	}
	// Requests blocked writing their log line die with the process; the line never
	// reaches the pipe.
	e.resumed = e.logs.Drop(id, e.resumed[:0])
	for _, ji := range e.resumed {
		e.failJob(ji, errClosed, back)
	}
	// Requests waiting off-CPU: their pending wait events find the job dead.
	for ji := range e.jobs {
		j := &e.jobs[ji]
		switch {
		case j.pod != id:
		case j.state == jobWaiting:
			j.state = jobDead
			e.connFailed(int32(ji), errClosed, back)
		case j.state == jobCalling:
			e.failJob(int32(ji), errClosed, back)
		}
	}
	e.dropCalls(id)
	p.busy = 0
	if p.envoy >= 0 {
		// The sidecar ends with the pod: the kernel closes the connections of the
		// requests it held.
		e.done = e.mesh.Stop(p.envoy, e.done[:0])
		for _, ji := range e.done {
			e.failJob(ji, errClosed, back)
		}
	}
}

// Gone: the sandbox is gone with its IP, and the pod object with it: its endpoint
// leaves the EndpointSlice and its node has room again.
func (c podCluster) Gone(id int32) {
	e := c.e
	p := &e.pods[id]
	p.grp.Remove()
	if p.envoy >= 0 {
		e.mesh.Remove(p.envoy)
	}
	e.mesh.Forget(id)
	e.nodes[p.node].pods--
	e.sched.Remove("service/" + p.name)
	svc := &e.services[p.svc]
	for i, x := range svc.pods {
		if x == id {
			svc.pods = append(svc.pods[:i], svc.pods[i+1:]...)
			break
		}
	}
	e.routing.Changed(p.svc)
	e.life.RoomFreed()
	e.deployments.Changed(p.svc, 0)
}
