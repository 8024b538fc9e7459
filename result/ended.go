package result

import (
	"encoding/json"
	"fmt"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// EndedTally sums requests as they end, as vegeta's report does (lib/metrics.go,
// Metrics.Add): their number, the exact sum and extremes of their latencies, a
// histogram of them, the window they were sent in and their bytes. It is the part of
// an Ended that every engine computes alike; each adds the status codes and errors
// its requests give. Times are nanoseconds on the engine's clock, since its run's
// start.
type EndedTally struct {
	n, sum, min, max             int64
	firstSent, lastSent, lastEnd int64
	bytesOut, bytesIn            int64
	latency                      *hdr.Histogram // every latency, ns
}

// NewEndedTally is an empty tally whose histogram holds latencies up to an hour at 3
// significant digits, as every engine's latency histograms do.
func NewEndedTally() EndedTally {
	return EndedTally{latency: hdr.New(1, hourNS, 3)}
}

const hourNS = int64(3600e9)

// Add counts a request sent at sent that ended at end, after latency ns, with the
// bytes of its body out and of its answer's in. The histogram records latency
// within its range; the sum and extremes keep it exact.
func (x *EndedTally) Add(latency, sent, end, out, in int64) {
	if x.n == 0 {
		x.min, x.firstSent = latency, sent
	}
	x.n++
	x.sum += latency
	x.min, x.max = min(x.min, latency), max(x.max, latency)
	x.firstSent, x.lastSent, x.lastEnd = min(x.firstSent, sent), max(x.lastSent, sent), max(x.lastEnd, end)
	_ = x.latency.RecordValue(min(max(latency, 1), x.latency.HighestTrackableValue()))
	x.bytesOut += out
	x.bytesIn += in
}

// Merge adds y's requests, counted on the same clock, into x.
func (x *EndedTally) Merge(y *EndedTally) {
	if y.n == 0 {
		return
	}
	if x.n == 0 {
		x.min, x.firstSent = y.min, y.firstSent
	}
	x.n += y.n
	x.sum += y.sum
	x.min, x.max = min(x.min, y.min), max(x.max, y.max)
	x.firstSent, x.lastSent, x.lastEnd = min(x.firstSent, y.firstSent), max(x.lastSent, y.lastSent), max(x.lastEnd, y.lastEnd)
	x.bytesOut += y.bytesOut
	x.bytesIn += y.bytesIn
	x.latency.Merge(y.latency)
}

// Ended is the tally as an Ended, with no status codes or errors yet (an empty
// map, nil); all zero when no request ended, as vegeta's report.
func (x *EndedTally) Ended() *Ended {
	return &Ended{
		LatencyMS: LatencyBetween(x.latency, x.min, x.max), LatencySumNS: x.sum, LatencyMinNS: x.min, LatencyMaxNS: x.max,
		FirstSentNS: x.firstSent, LastSentNS: x.lastSent, LastEndNS: x.lastEnd,
		BytesOut: x.bytesOut, BytesIn: x.bytesIn, StatusCodes: map[string]int64{},
	}
}

// Recorded is how many latencies the tally's histogram holds: every request added.
func (x *EndedTally) Recorded() int64 {
	if x.latency == nil {
		return 0
	}
	return x.latency.TotalCount()
}

// endedTallyJSON is an EndedTally as JSON, for a tally that crosses from one
// process to another (emulate's client pods).
type endedTallyJSON struct {
	N, Sum, Min, Max             int64
	FirstSent, LastSent, LastEnd int64
	BytesOut, BytesIn            int64
	Latency                      string
}

// MarshalJSON writes every part of the tally, its histogram compressed.
func (x EndedTally) MarshalJSON() ([]byte, error) {
	h := x.latency
	if h == nil {
		h = hdr.New(1, hourNS, 3)
	}
	lat, err := EncodeHistogram(h)
	if err != nil {
		return nil, err
	}
	return json.Marshal(endedTallyJSON{x.n, x.sum, x.min, x.max, x.firstSent, x.lastSent, x.lastEnd, x.bytesOut, x.bytesIn, lat})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (x *EndedTally) UnmarshalJSON(b []byte) error {
	var j endedTallyJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	h, err := DecodeHistogram(j.Latency)
	if err != nil {
		return err
	}
	*x = EndedTally{j.N, j.Sum, j.Min, j.Max, j.FirstSent, j.LastSent, j.LastEnd, j.BytesOut, j.BytesIn, h}
	return nil
}

// EncodeHistogram writes h in HdrHistogram's compressed base64 form, which every
// HdrHistogram implementation reads.
func EncodeHistogram(h *hdr.Histogram) (string, error) {
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	return string(b), err
}

// DecodeHistogram reads what EncodeHistogram wrote.
func DecodeHistogram(s string) (*hdr.Histogram, error) {
	h, err := hdr.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("a latency histogram: %w", err)
	}
	return h, nil
}
