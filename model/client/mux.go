package client

import "trafficlab/sim"

// HTTP/2 pools. A pool with Limits.Streams > 0 multiplexes: a request takes a stream
// on the first connection below the server's SETTINGS_MAX_CONCURRENT_STREAMS, and a
// new connection is opened only when every one is full. That is Go's
// (golang.org/x/net/http2 transport.go clientConnPool.getClientConn: the first
// connection whose CanTakeNewRequest holds, else dial) and, with
// EnableMultipleHttp2Connections, .NET's; so a pool normally holds one connection
// per host, and kube-proxy pins all of its requests to one pod.
//
// A connection stops taking streams when the server sends GOAWAY or it passes its
// lifetime (Retire); it closes when its last stream ends.

// TakeStream returns a connection with room for one more stream, counting the stream,
// or false when every connection is full (or none is open). Connections past their
// lifetime are retired on the way (.NET's PooledConnectionLifetime applies to HTTP/2
// too); idle ones among them are appended to expired for the caller to close.
func (p *Pool) TakeStream(now sim.Time, conns *Conns, expired []ConnID) (ConnID, bool, []ConnID) {
	for i := 0; i < len(p.mux); i++ {
		id := p.mux[i]
		c := conns.Get(id)
		if p.MaxLifetime > 0 && now-c.Opened >= p.MaxLifetime {
			i--
			if p.Retire(conns, id) {
				expired = append(expired, id)
			}
			continue
		}
		if int(c.Streams) < p.Streams {
			c.Streams++
			c.LastUsed = now
			return id, true, expired
		}
	}
	return 0, false, expired
}

// TakeStreamInTurn is TakeStream for a round_robin channel: its connections take
// calls in turn, a full one skipped (grpc-go balancer/roundrobin: the picker
// returns the next READY SubConn of its list, wrapping around).
func (p *Pool) TakeStreamInTurn(now sim.Time, conns *Conns) (ConnID, bool) {
	n := len(p.mux)
	for k := range n {
		i := (p.turn + k) % n
		c := conns.Get(p.mux[i])
		if int(c.Streams) < p.Streams {
			c.Streams++
			c.LastUsed = now
			p.turn = i + 1
			return p.mux[i], true
		}
	}
	return 0, false
}

// AddStreamConn records a newly opened connection carrying its first stream.
func (p *Pool) AddStreamConn(conns *Conns, id ConnID) {
	conns.Get(id).Streams = 1
	p.mux = append(p.mux, id)
}

// EndStream ends a stream on id. A waiter, if any, takes the freed stream (Handed);
// a retired connection with no streams left must be closed (Closed); otherwise the
// connection stays (Idle).
func (p *Pool) EndStream(now sim.Time, conns *Conns, id ConnID, live func(Waiter) bool) (Outcome, Waiter) {
	c := conns.Get(id)
	c.Streams--
	c.LastUsed = now
	if c.Retired {
		if c.Streams == 0 {
			p.open--
			return Closed, Waiter{}
		}
		return Idle, Waiter{}
	}
	if w, ok := p.NextWaiter(live); ok {
		c.Streams++
		return Handed, w
	}
	return Idle, Waiter{}
}

// Retire stops id taking new streams (GOAWAY received). It reports whether the
// connection has no stream left and must be closed now.
func (p *Pool) Retire(conns *Conns, id ConnID) bool {
	c := conns.Get(id)
	p.retire(c, id)
	if c.Streams == 0 {
		p.open--
		return true
	}
	return false
}

// Muxed lists the connections taking streams.
func (p *Pool) Muxed() []ConnID { return p.mux }

// DropStreamConn forgets a multiplexed connection that failed under its streams.
func (p *Pool) DropStreamConn(conns *Conns, id ConnID) {
	p.retire(conns.Get(id), id)
	p.open--
}

// retire takes connection id (c) out of the ones taking streams, once.
func (p *Pool) retire(c *Conn, id ConnID) {
	if c.Retired {
		return
	}
	c.Retired = true
	for i, m := range p.mux {
		if m == id {
			p.removeMux(i)
			return
		}
	}
}

func (p *Pool) removeMux(i int) {
	p.mux = append(p.mux[:i], p.mux[i+1:]...)
}
