package network

import (
	"trafficlab/model/client"
	"trafficlab/model/netw"
	"trafficlab/sim"
)

// HTTP/2 flow control (RFC 9113 section 5.2). On an HTTP/2 connection a sender may
// have at most the receiver's stream window of a stream's DATA, and its connection
// window over all streams, not yet consumed by the receiving application; the
// receiver returns credit with WINDOW_UPDATE as it reads. A message larger than the
// windows therefore goes in chunks, a round trip apart: a 4 MiB stream window over a
// 50 ms round trip carries at most 80 MiB/s per stream whatever TCP could do.
//
// Modelled on connections that run the segment model (every HTTP/2 connection does):
// each direction has its connection credit and a queue of streams waiting for it;
// each message keeps its stream credit. Headers are not flow-controlled and go with
// the first chunk. The receiving application reads a chunk as soon as it is
// delivered, and its WINDOW_UPDATE takes the path's one-way latency back, never lost
// (a control frame, as resets and FINs are treated here).

// flowConn is one HTTP/2 connection's flow-control state.
type flowConn struct {
	on         bool
	credit     [2]int64             // connection window left, per direction
	blocked    [2]sim.FIFO[waiting] // streams waiting for connection credit
	streamSize [2]int64             // the receiver's stream window, per direction
}

// stream is a job's HTTP/2 stream as flow control sees it, for the job of serial:
// the DATA bytes of the message being sent not yet sent, the stream's credit, the
// chunks on their way, the direction; reset when the stream was reset (no answer is
// sent). conn and seq are the connection it is sent on.
type stream struct {
	serial                 uint32
	dataLeft, streamCredit int64
	chunksOut              int32
	dir                    netw.Dir
	reset                  bool
	conn                   client.ConnID
	seq                    uint32
}

// chunk is a piece of a message in flight: which job, how many DATA bytes (returned
// as credit once delivered), and on which connection and direction.
type chunk struct {
	job    int32
	serial uint32 // the job's
	data   int64
	conn   client.ConnID
	seq    uint32
	dir    netw.Dir
}

// stream is job ji's stream state, for the job of serial.
func (n *Network) stream(ji int32, serial uint32) *stream {
	for int(ji) >= len(n.streams) {
		n.streams = append(n.streams, stream{})
	}
	s := &n.streams[ji]
	if s.serial != serial {
		*s = stream{serial: serial}
	}
	return s
}

// StartFlow turns flow control on for HTTP/2 connection id with the receivers'
// windows: up is the server's (for requests), down the client's (for answers).
func (n *Network) StartFlow(id client.ConnID, up, down [2]int64) {
	for int(id) >= len(n.flow) {
		n.flow = append(n.flow, flowConn{})
	}
	// A new state, waiting queues and all: streams of an earlier connection in this
	// slot were failed when it closed.
	f := flowConn{on: true}
	f.streamSize[netw.Up], f.credit[netw.Up] = up[0], up[1]
	f.streamSize[netw.Down], f.credit[netw.Down] = down[0], down[1]
	n.flow[id] = f
}

// stopFlow forgets a closed connection's flow state; its streams still waiting for
// credit (seq: the connection's close count before this close) go down with it.
func (n *Network) stopFlow(id client.ConnID, seq uint32) {
	if int(id) >= len(n.flow) || !n.flow[id].on {
		return
	}
	n.flow[id].on = false
	// A scan: HTTP/2 connections are few and close rarely.
	for ji := range n.streams {
		s := &n.streams[ji]
		if s.conn == id && s.seq == seq && s.dataLeft > 0 && n.msgs.Current(int32(ji), s.serial) {
			n.msgs.Lost(int32(ji))
		}
	}
}

// ResetStream: job ji's stream was reset (RST_STREAM: the client or its sidecar gave
// up on it). Neither side sends more of it, and its answer is not sent; credit for
// what is already on its way comes back as usual. It reports whether the message
// ends here, waiting for credit with nothing on its way.
func (n *Network) ResetStream(ji int32, serial uint32) bool {
	s := n.stream(ji, serial)
	s.reset = true
	if s.dataLeft > 0 && s.chunksOut == 0 {
		return true
	}
	s.dataLeft = 0 // the chunks on their way still complete it
	return false
}

// WasReset tells whether job ji (serial)'s stream was reset.
func (n *Network) WasReset(ji int32, serial uint32) bool {
	return int(ji) < len(n.streams) && n.streams[ji].serial == serial && n.streams[ji].reset
}

// Send puts job ji (serial)'s message on connection id in direction d: header bytes
// and data bytes of body, under flow control on HTTP/2.
func (n *Network) Send(id client.ConnID, d netw.Dir, header, data int64, ji int32, serial uint32) {
	w := netw.ConnID(n.wire[id])
	if int(id) >= len(n.flow) || !n.flow[id].on || data == 0 {
		n.stack.Send(w, d, int(header+data), ji)
		return
	}
	s := n.stream(ji, serial)
	s.dataLeft, s.streamCredit, s.chunksOut, s.dir = data, n.flow[id].streamSize[d], 0, d
	s.conn, s.seq = id, (*n.cfg.Seq)[id]
	n.pushData(id, d, ji, header)
}

// pushData sends as much of job ji's remaining DATA as its stream and connection
// credit allow (with the header bytes when the message starts); a stream with stream
// credit but no connection credit queues for the connection.
func (n *Network) pushData(id client.ConnID, d netw.Dir, ji int32, header int64) {
	f := &n.flow[id]
	s := &n.streams[ji]
	x := min(s.dataLeft, s.streamCredit, f.credit[d])
	if x > 0 || header > 0 {
		ci := n.newChunk(chunk{job: ji, serial: s.serial, data: x, conn: id, seq: (*n.cfg.Seq)[id], dir: d})
		s.dataLeft -= x
		s.streamCredit -= x
		f.credit[d] -= x
		s.chunksOut++
		n.stack.Send(netw.ConnID(n.wire[id]), d, int(header+x), -ci-1)
	}
	if s.dataLeft > 0 && s.streamCredit > 0 && f.credit[d] == 0 {
		f.blocked[d].Push(waiting{ji, s.serial})
	}
}

// waiting is a stream queued for connection credit.
type waiting struct {
	job    int32
	serial uint32
}

func (n *Network) newChunk(c chunk) int32 { return sim.Alloc(&n.chunks, &n.freeChunks, c) }

func (n *Network) freeChunk(i int32) { n.freeChunks = append(n.freeChunks, i) }

// chunkDelivered: chunk ci reached the receiving application, which reads it and
// returns its credit; the message is delivered with its last chunk.
func (n *Network) chunkDelivered(ci int32) {
	c := n.chunks[ci]
	if c.data > 0 && (*n.cfg.Seq)[c.conn] == c.seq {
		n.k.After(n.windowUpdateDelay(c.conn, c.dir), n.evWindowUpdate, ci, c.serial)
	} else {
		n.freeChunk(ci)
	}
	if !n.msgs.Current(c.job, c.serial) {
		return
	}
	s := &n.streams[c.job]
	if s.chunksOut--; s.chunksOut > 0 || s.dataLeft > 0 {
		return
	}
	if c.dir == netw.Up {
		n.msgs.Arrived(c.job)
		return
	}
	n.msgs.Answered(c.job)
}

// windowUpdateDelay is the one-way latency back to the sender of direction d on
// connection id, which a WINDOW_UPDATE takes (never lost, as other control frames).
func (n *Network) windowUpdateDelay(id client.ConnID, d netw.Dir) sim.Time {
	l := n.link[id]
	if d == netw.Up {
		return n.path(l.to, l.from).Latency
	}
	return n.path(l.from, l.to).Latency
}

// live tells whether job ji (serial)'s stream still waits for credit in direction d.
func (n *Network) live(ji int32, serial uint32, d netw.Dir) bool {
	s := &n.streams[ji]
	return s.serial == serial && n.msgs.Current(ji, serial) && s.dir == d && s.dataLeft > 0
}

// onWindowUpdate: a chunk's WINDOW_UPDATE reached its sender: stream and connection
// credit come back, the stream sends on, and streams waiting for the connection go.
func (n *Network) onWindowUpdate(ev sim.Event) {
	c := n.chunks[ev.Obj]
	n.freeChunk(ev.Obj)
	if (*n.cfg.Seq)[c.conn] != c.seq || n.wire[c.conn] < 0 {
		return
	}
	f := &n.flow[c.conn]
	f.credit[c.dir] += c.data
	// A request's last update may come back after its answer has started: it returns
	// connection credit only.
	if n.live(c.job, c.serial, c.dir) {
		s := &n.streams[c.job]
		s.streamCredit += c.data
		if s.streamCredit == c.data { // it was waiting for this stream's credit
			n.pushData(c.conn, c.dir, c.job, 0)
		}
	}
	for f.credit[c.dir] > 0 {
		w, ok := f.blocked[c.dir].Pop()
		if !ok {
			break
		}
		if n.live(w.job, w.serial, c.dir) {
			n.pushData(c.conn, c.dir, w.job, 0)
		}
	}
}

// lostChunk: chunk ci went down with its connection; so does its message.
func (n *Network) lostChunk(ci int32) {
	c := n.chunks[ci]
	n.freeChunk(ci)
	if n.msgs.Current(c.job, c.serial) {
		n.msgs.Lost(c.job)
	}
}
