package result

import "time"

// Request is one request as an engine streams it out when asked to (simulate
// --requests). Engines keep none of them, so memory stays flat however many there are.
type Request struct {
	// Seq is the request's place in sending order, counting from 0.
	Seq uint64
	// Sent is when it was sent; simulate's clock starts at 2026-01-01T00:00:00Z.
	Sent time.Time
	// LatencyNS runs to the last byte of the answer, or to the failure.
	LatencyNS int64
	// Code is the HTTP status (200, 503), or 0 when no answer came.
	Code int
	// Error is the error kind as Errors names it (timeout, connection_refused, ...);
	// empty on success.
	Error string
	// Pod is the pod that answered or failed the request; empty when none did, as
	// when there was no endpoint.
	Client, Service, Pod string
	Method               string
	// BytesOut is the request's body and BytesIn the answer's bytes, both 0 when no
	// answer came, as vegeta counts a result's (lib/attack.go).
	BytesOut, BytesIn int64
}
