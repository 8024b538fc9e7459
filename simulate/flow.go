package simulate

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

// startFlow turns flow control on for HTTP/2 connection id with the receivers'
// windows: up is the server's (for requests), down the client's (for answers).
func (e *Engine) startFlow(id client.ConnID, up, down [2]int64) {
	for int(id) >= len(e.flow) {
		e.flow = append(e.flow, flowConn{})
	}
	// A new state, waiting queues and all: streams of an earlier connection in this
	// slot were failed when it closed.
	f := flowConn{on: true}
	f.streamSize[netw.Up], f.credit[netw.Up] = up[0], up[1]
	f.streamSize[netw.Down], f.credit[netw.Down] = down[0], down[1]
	e.flow[id] = f
}

// stopFlow forgets a closed connection's flow state; its streams still waiting for
// credit (seq: the connection's close count before this close) go down with it.
func (e *Engine) stopFlow(id client.ConnID, seq uint32) {
	if int(id) >= len(e.flow) || !e.flow[id].on {
		return
	}
	e.flow[id].on = false
	// A scan: HTTP/2 connections are few and close rarely.
	for ji := range e.jobs {
		if j := &e.jobs[ji]; j.state != jobFree && j.conn == id && j.seq == seq && j.dataLeft > 0 {
			e.lostJob(int32(ji))
		}
	}
}

// resetStream: job ji's stream was reset (RST_STREAM: the client or its sidecar gave
// up on it). Neither side sends more of it, and its answer is not sent; credit for
// what is already on its way comes back as usual.
func (e *Engine) resetStream(ji int32, serial uint32) {
	j := &e.jobs[ji]
	if j.serial != serial || j.state == jobFree {
		return
	}
	j.reset = true
	if j.dataLeft > 0 && j.chunksOut == 0 {
		// Waiting for credit with nothing on its way: the message ends here.
		e.freeJob(ji)
		return
	}
	j.dataLeft = 0 // the chunks on their way still complete it
}

// sendMessage puts job ji's message on connection id in direction d: header bytes
// and data bytes of body, under flow control on HTTP/2.
func (e *Engine) sendMessage(id client.ConnID, d netw.Dir, header, data int64, ji int32) {
	w := netw.ConnID(e.wire[id])
	if int(id) >= len(e.flow) || !e.flow[id].on || data == 0 {
		e.stack.Send(w, d, int(header+data), ji)
		return
	}
	j := &e.jobs[ji]
	j.dataLeft, j.streamCredit, j.chunksOut, j.flowDir = data, e.flow[id].streamSize[d], 0, d
	e.pushData(id, d, ji, header)
}

// pushData sends as much of job ji's remaining DATA as its stream and connection
// credit allow (with the header bytes when the message starts); a stream with stream
// credit but no connection credit queues for the connection.
func (e *Engine) pushData(id client.ConnID, d netw.Dir, ji int32, header int64) {
	f := &e.flow[id]
	j := &e.jobs[ji]
	n := min(j.dataLeft, j.streamCredit, f.credit[d])
	if n > 0 || header > 0 {
		ci := e.newChunk(chunk{job: ji, serial: j.serial, data: n, conn: id, seq: e.connSeq[id], dir: d})
		j.dataLeft -= n
		j.streamCredit -= n
		f.credit[d] -= n
		j.chunksOut++
		e.stack.Send(netw.ConnID(e.wire[id]), d, int(header+n), -ci-1)
	}
	if j.dataLeft > 0 && j.streamCredit > 0 && f.credit[d] == 0 {
		f.blocked[d].Push(waiting{ji, j.serial})
	}
}

// waiting is a stream queued for connection credit.
type waiting struct {
	job    int32
	serial uint32
}

func (e *Engine) newChunk(c chunk) int32 { return sim.Alloc(&e.chunks, &e.freeChunks, c) }

func (e *Engine) freeChunk(i int32) { e.freeChunks = append(e.freeChunks, i) }

// chunkDelivered: chunk ci reached the receiving application, which reads it and
// returns its credit; the message is delivered with its last chunk.
func (e *Engine) chunkDelivered(ci int32) {
	c := e.chunks[ci]
	j := &e.jobs[c.job]
	if c.data > 0 && e.connSeq[c.conn] == c.seq {
		e.k.After(e.windowUpdateDelay(c.conn, c.dir), e.evWindowUpdate, ci, c.serial)
	} else {
		e.freeChunk(ci)
	}
	if j.serial != c.serial || j.state == jobFree {
		return
	}
	if j.chunksOut--; j.chunksOut > 0 || j.dataLeft > 0 {
		return
	}
	if c.dir == netw.Up {
		e.arrive(c.job)
		return
	}
	e.respond(c.job)
}

// windowUpdateDelay is the one-way latency back to the sender of direction d on
// connection id, which a WINDOW_UPDATE takes (never lost, as other control frames).
func (e *Engine) windowUpdateDelay(id client.ConnID, d netw.Dir) sim.Time {
	c := e.conns.Get(id)
	client, server := clientEnd(e.poolOwner[c.Pool]), c.Pod
	if d == netw.Up {
		return e.path(server, client).Latency
	}
	return e.path(client, server).Latency
}

// onWindowUpdate: a chunk's WINDOW_UPDATE reached its sender: stream and connection
// credit come back, the stream sends on, and streams waiting for the connection go.
func (e *Engine) onWindowUpdate(ev sim.Event) {
	c := e.chunks[ev.Obj]
	e.freeChunk(ev.Obj)
	if e.connSeq[c.conn] != c.seq || e.wire[c.conn] < 0 {
		return
	}
	f := &e.flow[c.conn]
	f.credit[c.dir] += c.data
	// A request's last update may come back after its answer has started: it returns
	// connection credit only.
	if j := &e.jobs[c.job]; j.serial == c.serial && j.state != jobFree && j.flowDir == c.dir && j.dataLeft > 0 {
		j.streamCredit += c.data
		if j.streamCredit == c.data { // it was waiting for this stream's credit
			e.pushData(c.conn, c.dir, c.job, 0)
		}
	}
	for f.credit[c.dir] > 0 {
		w, ok := f.blocked[c.dir].Pop()
		if !ok {
			break
		}
		if j := &e.jobs[w.job]; j.serial == w.serial && j.state != jobFree && j.flowDir == c.dir && j.dataLeft > 0 {
			e.pushData(c.conn, c.dir, w.job, 0)
		}
	}
}

// lostChunk: chunk ci went down with its connection; so does its message.
func (e *Engine) lostChunk(ci int32) {
	c := e.chunks[ci]
	e.freeChunk(ci)
	if j := &e.jobs[c.job]; j.serial == c.serial {
		e.lostJob(c.job)
	}
}

// envoyWindows are Envoy's HTTP/2 receive windows: initial_stream_window_size and
// initial_connection_window_size default to 256 MiB (api/envoy/config/core/v3/
// protocol.proto, Http2ProtocolOptions).
var envoyWindows = [2]int64{256 << 20, 256 << 20}

// receiveWindows are what a pod advertises to the connections it accepts: its
// sidecar's, or its app's.
func (e *Engine) receiveWindows(pod int32) [2]int64 {
	if e.pods[pod].envoy >= 0 {
		return envoyWindows
	}
	return e.services[e.pods[pod].svc].windows
}

// senderWindows are what the opening side of a connection of pool p advertises for
// the answers: an outbound envoy's, or the client app's.
func (e *Engine) senderWindows(pi int32) [2]int64 {
	if e.mesh.Owns(pi) {
		return envoyWindows
	}
	return e.deps[e.cpods[e.poolOwner[pi]].dep].windows
}

// registerFlow registers the event kinds of HTTP/2 flow control events with the kernel.
func (e *Engine) registerFlow() {
	e.evWindowUpdate = e.k.Register(e.onWindowUpdate)
}
