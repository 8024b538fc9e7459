package result

import "encoding/json"

// Succeeded is how many of the interval's requests succeeded: the ones its
// percentiles are of.
func (p Point) Succeeded() int64 { return p.Requests - p.Errors }

// MarshalJSON writes the percentiles of an interval in which no request succeeded as
// null: there was no latency to measure, and a 0 would pull down every average a
// reader takes over the timeline. Reading null back into a Point gives 0, so Results
// still round-trip.
func (p Point) MarshalJSON() ([]byte, error) {
	type plain Point // the same fields without this method
	out := struct {
		plain
		P50MS  *float64 `json:"p50_ms"`
		P90MS  *float64 `json:"p90_ms"`
		P99MS  *float64 `json:"p99_ms"`
		P999MS *float64 `json:"p999_ms"`
	}{plain: plain(p)}
	if p.Succeeded() > 0 {
		out.P50MS, out.P90MS, out.P99MS, out.P999MS = &p.P50MS, &p.P90MS, &p.P99MS, &p.P999MS
	}
	return json.Marshal(out)
}
