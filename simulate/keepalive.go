package simulate

import (
	"trafficlab/model/client"
	"trafficlab/sim"
)

// appCloses are the connections an app ends on its own:
//   - HTTP/1.1 connections idle past pod.idleTimeout, closed as Node's
//     server.keepAliveTimeout and Go's http.Server.IdleTimeout close them. The FIN
//     takes a trip to the client; a request the client sends meanwhile, or on the
//     closed connection later if its library does not check, reaches a closed
//     socket and is reset.
//   - HTTP/2 connections past a gRPC server's pod.grpc.maxConnectionAge, jittered
//     ±10 % per connection, which get a GOAWAY (grpc-go http2_server.go: a first
//     GOAWAY, a PING, and once its ack is back a second GOAWAY that refuses
//     streams opened meanwhile). The client retires the connection once it hears,
//     and opens a new one for its next calls; a call that reaches the server after
//     the second GOAWAY is refused, and the client sends it again.
//
// Only runs with an idle timeout or an age somewhere keep these tables.
type appCloses struct {
	on bool
	// Per connection: gen is bumped at each request that reaches the app and when
	// the connection closes, so a pending idle timer knows it is stale; closedAt is
	// when the app closed it as idle or sent its GOAWAY, 0 before.
	gen      []uint32
	closedAt []sim.Time
	// resets counts, per service, the requests that reached a connection its app
	// had closed as idle.
	resets []int64
}

// trackIdle readies the tables for a new connection in slot id.
func (e *Engine) trackIdle(id client.ConnID) {
	a := &e.appCloses
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

// voidIdleTimer voids connection id's pending idle timer: a request reached the
// app, or the connection closed.
func (e *Engine) voidIdleTimer(id client.ConnID) {
	if e.appCloses.on {
		e.appCloses.gen[id]++
	}
}

// idleFrom starts the idle timer of job ji's connection as the app answers it,
// when the app has one and the connection stays open for more: HTTP/1.1, straight
// to the app (a sidecar's own timeout governs its side), not closing.
func (e *Engine) idleFrom(ji int32) {
	j := &e.jobs[ji]
	if !e.appCloses.on || j.closeAfter || e.pods[j.pod].envoy >= 0 || e.multiplexed(j.conn, j.seq) {
		return
	}
	if after := e.services[e.pods[j.pod].svc].idleTimeout; after > 0 {
		e.k.After(after, e.evAppIdle, j.conn, e.appCloses.gen[j.conn])
	}
}

// ageFrom starts the age of a connection job ji opened, when the app is a gRPC
// server with a maxConnectionAge and the connection multiplexes.
func (e *Engine) ageFrom(ji int32) {
	j := &e.jobs[ji]
	svc := &e.services[e.pods[j.pod].svc]
	if svc.maxAge == 0 || !e.multiplexed(j.conn, j.seq) || e.pods[j.pod].envoy >= 0 {
		return
	}
	// grpc-go's getJitter: uniform in ±10 % of the age.
	age := svc.maxAge
	if tenth := int64(svc.maxAge / 10); tenth > 0 {
		age += sim.Time(svc.ageRNG.Int64N(2*tenth) - tenth)
	}
	e.k.After(age, e.evAppAge, j.conn, e.connSeq[j.conn])
}

// onAppAge: a connection reached its age; unless it closed since, the app sends
// GOAWAY.
func (e *Engine) onAppAge(ev sim.Event) {
	c := e.conns.Get(ev.Obj)
	if e.connSeq[ev.Obj] != ev.Gen || !c.Open {
		return
	}
	e.appCloses.closedAt[ev.Obj] = e.k.Now()
	if grace := e.services[e.pods[c.Pod].svc].ageGrace; grace > 0 {
		e.k.After(grace+closeLinger, e.evAppAgeClose, ev.Obj, ev.Gen)
	}
}

// closeLinger is how long grpc-go's server, told to close a connection its client
// still uses, waits before it closes the socket, so that unread data does not turn
// its FIN into a reset (internal/transport/http2_server.go NewServerTransport:
// time.NewTimer(time.Second) before t.conn.Close, grpc-go issue 5358).
const closeLinger = sim.Time(1e9)

// onAppAgeClose: an aged connection's grace is over, and the server has closed it
// (grpc-go http2_server.go keepalive: closeConnection, then the linger): the calls
// still on it learn of the FIN a hop later and fail, closed; the app goes on with
// them, and their answers find the connection gone.
func (e *Engine) onAppAgeClose(ev sim.Event) {
	id := ev.Obj
	c := e.conns.Get(id)
	if e.connSeq[id] != ev.Gen || !c.Open || e.mesh.Owns(c.Pool) {
		return
	}
	for _, si := range e.cpods[e.poolOwner[c.Pool]].slots {
		if s := &e.slots[si]; s.state == inFlight && s.conn == id && s.connSeq == ev.Gen {
			e.k.After(e.hop+e.relay, e.evClosed, si, s.gen)
		}
	}
}

// refusedAfterGoAway tells whether a stream that reaches the app now on connection
// id comes after the second GOAWAY: the app sent its first, a PING, and the
// second once the PING's ack came back, a round trip later.
func (e *Engine) refusedAfterGoAway(id client.ConnID) bool {
	return e.k.Now() >= e.appCloses.closedAt[id]+2*(e.hop+e.relay)
}

// onAppIdle: a connection's idle timer ran out; unless a request came or the
// connection closed since, the app closes it.
func (e *Engine) onAppIdle(ev sim.Event) {
	if a := &e.appCloses; a.gen[ev.Obj] == ev.Gen {
		a.closedAt[ev.Obj] = e.k.Now()
	}
}

// idleReset counts a request of job ji that reached a connection its app had
// closed as idle.
func (e *Engine) idleReset(ji int32) {
	a := &e.appCloses
	if a.resets == nil {
		a.resets = make([]int64, len(e.services))
	}
	a.resets[e.pods[e.jobs[ji].pod].svc]++
}

// appClosed tells whether the app closed connection id as idle, or sent it GOAWAY.
func (e *Engine) appClosed(id client.ConnID) bool {
	return e.appCloses.on && e.appCloses.closedAt[id] > 0
}

// heardAppClose tells whether the client of connection id has heard the app's
// close or GOAWAY: it takes one trip.
func (e *Engine) heardAppClose(id client.ConnID) bool {
	return e.appClosed(id) && e.k.Now() >= e.appCloses.closedAt[id]+e.hop+e.relay
}
