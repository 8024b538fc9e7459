package simulate

import (
	"trafficlab/model/client"
	"trafficlab/sim"
)

// appIdle is the apps' idle timeouts on their HTTP/1.1 connections
// (pod.idleTimeout): an app closes a connection no request has reached for that
// long, as Node's server.keepAliveTimeout and Go's http.Server.IdleTimeout do. Its
// FIN takes a trip to the client; a request the client sends meanwhile, or on the
// closed connection later if its library does not check, reaches a closed socket
// and is reset. Only runs with an idle timeout somewhere keep these tables.
type appIdle struct {
	on bool
	// Per connection: gen is bumped at each request that reaches the app and when
	// the connection closes, so a pending timer knows it is stale; closedAt is when
	// the app closed it as idle, 0 while it is open.
	gen      []uint32
	closedAt []sim.Time
	// resets counts, per service, the requests that reached a connection its app
	// had closed as idle.
	resets []int64
}

// trackIdle readies the tables for a new connection in slot id.
func (e *Engine) trackIdle(id client.ConnID) {
	a := &e.appIdle
	if !a.on {
		return
	}
	for int(id) >= len(a.gen) {
		a.gen = append(a.gen, 0)
		a.closedAt = append(a.closedAt, 0)
	}
	a.gen[id]++
	a.closedAt[id] = 0
}

// requestArrived voids connection id's idle timer: a request reached the app.
func (e *Engine) requestArrived(id client.ConnID) {
	if e.appIdle.on {
		e.appIdle.gen[id]++
	}
}

// connClosed voids connection id's idle timer: the connection is gone.
func (e *Engine) connClosed(id client.ConnID) {
	if e.appIdle.on && int(id) < len(e.appIdle.gen) {
		e.appIdle.gen[id]++
	}
}

// idleFrom starts the idle timer of job ji's connection as the app answers it,
// when the app has one and the connection stays open for more: HTTP/1.1, straight
// to the app (a sidecar's own timeout governs its side), not closing.
func (e *Engine) idleFrom(ji int32) {
	j := &e.jobs[ji]
	if !e.appIdle.on || j.closeAfter || e.pods[j.pod].envoy >= 0 || e.multiplexed(j.conn, j.seq) {
		return
	}
	if after := e.services[e.pods[j.pod].svc].idleTimeout; after > 0 {
		e.k.After(after, e.evAppIdle, j.conn, e.appIdle.gen[j.conn])
	}
}

// onAppIdle: a connection's idle timer ran out; unless a request came or the
// connection closed since, the app closes it.
func (e *Engine) onAppIdle(ev sim.Event) {
	if a := &e.appIdle; a.gen[ev.Obj] == ev.Gen {
		a.closedAt[ev.Obj] = e.k.Now()
	}
}

// idleReset counts a request of job ji that reached a connection its app had
// closed as idle.
func (e *Engine) idleReset(ji int32) {
	a := &e.appIdle
	if a.resets == nil {
		a.resets = make([]int64, len(e.services))
	}
	a.resets[e.pods[e.jobs[ji].pod].svc]++
}

// appClosedIdle tells whether the app closed connection id as idle.
func (e *Engine) appClosedIdle(id client.ConnID) bool {
	return e.appIdle.on && e.appIdle.closedAt[id] > 0
}

// heardAppClose tells whether the client of connection id has heard the app's
// idle close: its FIN takes one trip.
func (e *Engine) heardAppClose(id client.ConnID) bool {
	return e.appClosedIdle(id) && e.k.Now() >= e.appIdle.closedAt[id]+e.hop+e.relay
}
