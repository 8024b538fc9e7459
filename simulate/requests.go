package simulate

import (
	"strconv"

	"trafficlab/result"
	"trafficlab/sim"
)

// StreamRequests has f called with every request as it ends, success or failure, in
// the order they end. r is reused after f returns. Without it requests cost nothing
// here: the hot path checks a nil function.
func (e *Engine) StreamRequests(f func(r *result.Request)) { e.onRequest = f }

// streamRequest passes slot si's request, ended now, to the stream: kind is its
// error kind or -1, pod the pod that answered or failed it, or -1. Bytes are
// counted as vegeta counts them (lib/attack.go, Attacker.hit): the request body
// once an answer came, and the answer; nothing without one.
func (e *Engine) streamRequest(si int32, kind int, pod int32) {
	s := &e.slots[si]
	d := &e.deps[e.cpods[s.cpod].dep]
	svc := &e.services[d.svc]
	r := &e.request
	*r = result.Request{Seq: s.seq, Sent: s.sent.Clock(), LatencyNS: int64(e.k.Now() - s.sent),
		Client: d.spec.Name, Service: svc.name, Method: d.spec.Request.Method}
	if pod >= 0 {
		r.Pod = e.pods[pod].name
	}
	switch kind {
	case -1:
		r.Code, r.BytesOut, r.BytesIn = 200, d.bodyBytes, int64(svc.respBytes)
	case int(errUnavailable): // the sidecar's 503 is an answer, with a status
		r.Code, r.BytesOut, r.Error = 503, d.bodyBytes, result.ErrorKind(kind).String()
	default:
		r.Error = result.ErrorKind(kind).String()
	}
	e.onRequest(r)
}

// ended sums every request that ended as vegeta's report does (lib/metrics.go,
// Metrics.Add): the tally every engine keeps, with the codes this engine gives and
// the distinct errors in the order first seen. The Result's Ended.
type ended struct {
	result.EndedTally
	codes  [3]int64 // 200, 503, 0: the codes the engine gives
	errors []result.EndedError
}

// add counts a request sent at sent that ended at now; kind is its error kind or
// -1; out and in its bytes as streamRequest counts them.
func (x *ended) add(sent, now sim.Time, kind int, out, in int64) {
	x.Add(int64(now-sent), int64(sent), int64(now), out, in)
	switch kind {
	case -1:
		x.codes[0]++
	case int(errUnavailable):
		x.codes[1]++
	default:
		x.codes[2]++
	}
}

// seen notes a failure of kind on d's requests, once per kind and deployment.
func (x *ended) seen(kind uint8, d *clientDeployment, service string) {
	if d.errSeen&(1<<kind) != 0 {
		return
	}
	d.errSeen |= 1 << kind
	x.errors = append(x.errors, result.EndedError{Kind: result.ErrorKind(kind).String(), Service: service, Method: d.spec.Request.Method})
}

func (x *ended) result() *result.Ended {
	r := x.Ended()
	r.Errors = x.errors
	for i, code := range []int{200, 503, 0} {
		if x.codes[i] > 0 {
			r.StatusCodes[strconv.Itoa(code)] = x.codes[i]
		}
	}
	return r
}
