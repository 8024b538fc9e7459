package mesh

import (
	"trafficlab/model/sidecar"
	"trafficlab/sim"
)

// AttemptFailed: attempt a's connection failed under it (end: a reset, or a refused
// HTTP/2 stream); the envoy hears after delay, unless it has given up on the
// attempt already.
func (m *Mesh) AttemptFailed(a Attempt, end sidecar.AttemptEnd, delay sim.Time) {
	if m.current(a) {
		m.failAttempt(a.Req, end, delay)
	}
}

// failAttempt tells outbound request di, after delay, that its attempt failed; once
// per attempt.
func (m *Mesh) failAttempt(di int32, failure sidecar.AttemptEnd, delay sim.Time) {
	d := &m.tasks[di]
	if d.failing {
		return
	}
	d.failing, d.failure = true, failure
	m.k.After(delay, m.evUpFail, di, d.serial)
}

// onUpFail: outbound request di's attempt failed (refused connection, reset, or the
// connection closed under it). Envoy retries what its policy covers on another pod,
// after its backoff; the rest reaches the app as a 503.
func (m *Mesh) onUpFail(ev sim.Event) {
	di := ev.Obj
	d := &m.tasks[di]
	if d.serial != ev.Gen || !d.live {
		return
	}
	x := &m.envoys[d.envoy]
	pi := d.pool
	conns := m.conns()
	open := d.upConn >= 0 && m.seq(d.upConn) == d.upSeq
	switch {
	case open && x.http2 && d.failure == sidecar.RefusedStream:
		// GOAWAY: the connection takes no new streams; the others on it finish.
		if m.pool(pi).Retire(conns, d.upConn) {
			m.CloseUp(d.upConn)
		} else {
			m.release(pi, d.upConn, false)
		}
	case open:
		p := m.pool(pi)
		if x.http2 {
			p.DropStreamConn(conns, d.upConn)
		} else {
			p.Drop()
		}
		m.CloseUp(d.upConn)
		m.Wake(pi)
	case d.upConn < 0:
		m.pool(pi).Drop() // a dial that failed
		x.breakerOf(d.svc).Release(sidecar.Connections)
	}
	m.end(di)
	m.retryOr503(di)
}

// retryOr503 decides what follows outbound request di's failed attempt: another
// attempt after Envoy's backoff when the retry policy covers the failure, else a 503.
func (m *Mesh) retryOr503(di int32) {
	d := &m.tasks[di]
	x := &m.envoys[d.envoy]
	d.failing = false
	if !m.awaited(di) {
		m.apps.Free(di)
		return
	}
	a := sidecar.Attempt{End: d.failure, RequestSent: d.failure != sidecar.ConnectFailure}
	switch x.retry.Decide(a, int(d.tries)-1, x.breakerOf(d.svc)) {
	case sidecar.RetryYes:
		x.retries++
		d.retryHeld = true
		m.k.After(sidecar.Backoff(int(d.tries), 0, 0, x.rng), m.evRetry, di, d.serial)
	default:
		m.unavailable(di, d.target)
	}
}

// onPerTry: the retry policy's per-try timeout of outbound request di's attempt
// fired. Envoy resets the attempt (router.cc onPerTryTimeoutCommon): a pending
// request leaves the queue, an HTTP/1.1 connection closes, an HTTP/2 stream is reset;
// then the retry policy decides.
func (m *Mesh) onPerTry(ev sim.Event) {
	di := ev.Obj
	d := &m.tasks[di]
	if d.attemptSerial != ev.Gen || !d.live || d.failing || !m.cancel(di) {
		return
	}
	d.failure = sidecar.PerTryTimeout
	m.retryOr503(di)
}

func (m *Mesh) onRetry(ev sim.Event) {
	if d := &m.tasks[ev.Obj]; d.serial == ev.Gen && d.live {
		m.route(ev.Obj)
	}
}

// unavailable answers outbound request di with a 503, caused by pod cause (-1: none).
func (m *Mesh) unavailable(di, cause int32) {
	d := &m.tasks[di]
	m.envoys[d.envoy].unavailable++
	d.cause = cause
	m.k.After(m.cfg.Local, m.evUnavailable, di, d.serial)
}

// onUnavailable: the app reads the 503; its loopback connection stays usable.
func (m *Mesh) onUnavailable(ev sim.Event) {
	if d := &m.tasks[ev.Obj]; d.serial == ev.Gen && d.live {
		m.apps.Unavailable(ev.Obj, d.cause)
	}
}
