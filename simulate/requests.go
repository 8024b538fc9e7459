package simulate

import "trafficlab/result"

// StreamRequests has f called with every request as it ends, success or failure, in
// the order they end. r is reused after f returns. Without it requests cost nothing
// here: the hot path checks a nil function.
func (e *Engine) StreamRequests(f func(r *result.Request)) { e.onRequest = f }

// streamRequest passes slot si's request, ended now, to the stream: kind is its
// error kind or -1, pod the pod that answered or failed it, or -1.
func (e *Engine) streamRequest(si int32, kind int, pod int32) {
	s := &e.slots[si]
	d := &e.deps[e.cpods[s.cpod].dep]
	svc := &e.services[d.svc]
	r := &e.request
	*r = result.Request{Seq: s.seq, Sent: clock(s.sent), LatencyNS: int64(e.k.Now() - s.sent),
		Client: d.spec.Name, Service: svc.name, Method: d.spec.Request.Method,
		BytesOut: d.headerBytes + d.bodyBytes}
	if pod >= 0 {
		r.Pod = e.pods[pod].name
	}
	switch kind {
	case -1:
		r.Code, r.BytesIn = 200, int64(svc.respBytes)
	case int(errUnavailable): // the sidecar's 503 is an answer, with a status
		r.Code, r.Error = 503, errorNames[kind]
	default:
		r.Error = errorNames[kind]
	}
	e.onRequest(r)
}
