package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"trafficlab/result"
)

// The reports vegeta's users already read, written from a Result: `vegeta report
// -type=json` (VegetaJSON) and `-type=hist` (VegetaHist), so a run can go through
// the scripts and dashboards built for vegeta. Field names, units and layouts
// follow tsenart/vegeta lib/metrics.go (the Metrics, LatencyMetrics and
// ByteMetrics types and how Add and Close fill them), lib/reporters.go
// (NewJSONReporter, NewHistogramReporter), lib/histogram.go (the buckets' JSON
// and labels) and lib/attack.go (what a result's code and error are).
//
// A simulated run has no wall clock: its times are simulated seconds after
// vegetaEpoch; a real attack's are its own (Ended.StartUnixNS).

// vegetaEpoch is the instant a run starts in VegetaJSON's timestamps. Any fixed
// instant keeps the report deterministic; this one is easy to subtract.
var vegetaEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// vegetaMetrics has vegeta's Metrics fields, in its order, with its JSON names.
// time.Duration encodes as integer nanoseconds and time.Time as RFC 3339, as there.
type vegetaMetrics struct {
	Latencies   vegetaLatencies  `json:"latencies"`
	Buckets     vegetaBuckets    `json:"buckets,omitempty"`
	BytesIn     vegetaBytes      `json:"bytes_in"`
	BytesOut    vegetaBytes      `json:"bytes_out"`
	Earliest    time.Time        `json:"earliest"`
	Latest      time.Time        `json:"latest"`
	End         time.Time        `json:"end"`
	Duration    time.Duration    `json:"duration"`
	Wait        time.Duration    `json:"wait"`
	Requests    int64            `json:"requests"`
	Rate        float64          `json:"rate"`
	Throughput  float64          `json:"throughput"`
	Success     float64          `json:"success"`
	StatusCodes map[string]int64 `json:"status_codes"`
	Errors      []string         `json:"errors"`
}

type vegetaLatencies struct {
	Total time.Duration `json:"total"`
	Mean  time.Duration `json:"mean"`
	P50   time.Duration `json:"50th"`
	P90   time.Duration `json:"90th"`
	P95   time.Duration `json:"95th"`
	P99   time.Duration `json:"99th"`
	Max   time.Duration `json:"max"`
	Min   time.Duration `json:"min"`
}

type vegetaBytes struct {
	Total int64   `json:"total"`
	Mean  float64 `json:"mean"`
}

// ErrNotEveryRequest is VegetaJSON's error for a result that does not sum up every
// request that ended (Result.Ended): vegeta's figures are over all of them.
var ErrNotEveryRequest = errors.New("vegeta's report is computed from every request's latency, send time and bytes, which this result does not keep")

// VegetaJSON writes the result as `vegeta report -type=json` does: one line of JSON,
// each field as vegeta's Metrics.Add and Close (lib/metrics.go) compute it from the
// same requests, the Result's Ended:
//
//   - latencies: over every request, failed ones at their time to failure; total
//     is their sum and mean total / requests, truncated to the nanosecond; min and
//     max exact, percentiles to HdrHistogram's 3 significant digits where vegeta
//     estimates them with a t-digest.
//   - buckets: the scenario's report.histogram, keyed by each bucket's lower bound
//     in nanoseconds, as `vegeta report -type=json -buckets` adds; absent without one.
//   - bytes_in, bytes_out: the answers' bytes and the requests' bodies, over the
//     requests answered; the means are per request.
//   - earliest and latest are when the first and last request were sent, end when
//     the last one ended, on the run's wall clock or after vegetaEpoch; duration
//     is latest − earliest and wait end − latest.
//   - rate is requests / duration and throughput successes / (duration + wait), or
//     the counts themselves when duration is 0, as Close does.
//   - success: successful requests over requests.
//   - status_codes: per code, "0" for requests without an answer (timeouts and
//     connection errors: vegeta leaves a result's code 0 then).
//   - errors: the distinct error messages in the order first seen (vegetaErrors).
func VegetaJSON(w io.Writer, r *result.Result) error {
	x := r.Ended
	if x == nil {
		return fmt.Errorf("%w (engine %q, written by a trafficlab older than the ended block; rerun it, or read vegeta's own results)", ErrNotEveryRequest, r.Engine)
	}
	m := vegetaMetrics{
		Buckets:     r.Histogram,
		Requests:    r.Requests.Total,
		StatusCodes: x.StatusCodes,
		Errors:      vegetaErrors(x),
	}
	if m.StatusCodes == nil {
		m.StatusCodes = map[string]int64{} // vegeta writes {} for no requests, not null
	}
	// Close leaves every figure zero without requests.
	if n := r.Requests.Total; n > 0 {
		l := x.LatencyMS
		m.Latencies = vegetaLatencies{
			Total: time.Duration(x.LatencySumNS),
			Mean:  time.Duration(float64(x.LatencySumNS) / float64(n)),
			P50:   nanos(l.P50), P90: nanos(l.P90), P95: nanos(l.P95), P99: nanos(l.P99),
			Max: time.Duration(x.LatencyMaxNS), Min: time.Duration(x.LatencyMinNS),
		}
		m.BytesIn = vegetaBytes{Total: x.BytesIn, Mean: float64(x.BytesIn) / float64(n)}
		m.BytesOut = vegetaBytes{Total: x.BytesOut, Mean: float64(x.BytesOut) / float64(n)}
		start := vegetaEpoch
		if x.StartUnixNS != 0 {
			start = time.Unix(0, x.StartUnixNS).UTC()
		}
		m.Earliest = start.Add(time.Duration(x.FirstSentNS))
		m.Latest = start.Add(time.Duration(x.LastSentNS))
		m.End = start.Add(time.Duration(x.LastEndNS))
		m.Duration = m.Latest.Sub(m.Earliest)
		m.Wait = m.End.Sub(m.Latest)
		ok := vegetaSuccesses(x)
		m.Rate, m.Throughput = float64(n), float64(ok)
		if secs := m.Duration.Seconds(); secs > 0 {
			m.Rate /= secs
			m.Throughput /= (m.Duration + m.Wait).Seconds()
		}
		m.Success = float64(ok) / float64(n)
	}
	// vegeta's Encoder, without indentation, ends the line with a newline.
	return json.NewEncoder(w).Encode(m)
}

// vegetaSuccesses counts requests as vegeta's Metrics.Add does: a code from 200 to 399.
func vegetaSuccesses(x *result.Ended) int64 {
	var n int64
	for code, c := range x.StatusCodes {
		if k, err := strconv.Atoi(code); err == nil && k >= 200 && k < 400 {
			n += c
		}
	}
	return n
}

// nanos converts milliseconds to a duration, rounded to the nanosecond.
func nanos(ms float64) time.Duration {
	return time.Duration(math.Round(ms * float64(time.Millisecond)))
}

// vegetaErrors is the distinct errors, in the order first seen. A message the
// client wrote is kept; otherwise it is worded as Go's http.Client words the kind
// on that request (vegetaError).
func vegetaErrors(x *result.Ended) []string {
	out := []string{} // vegeta writes [] when there were none, not null
	seen := map[string]bool{}
	for _, e := range x.Errors {
		msg := e.Message
		if msg == "" {
			msg = vegetaError(e.Kind, e.Method, e.Service)
		}
		// vegeta's errors are unique messages: two kinds can read alike.
		if !seen[msg] {
			seen[msg] = true
			out = append(out, msg)
		}
	}
	return out
}

// vegetaError is Go's wording of an error kind on a request with this method to
// http://host/ (url.Error writes the method as Get, Post); empty for no error.
func vegetaError(kind, method, host string) string {
	if kind == "" {
		return ""
	}
	if method == "" {
		method = "GET"
	}
	op := fmt.Sprintf("%s %q: ", method[:1]+strings.ToLower(method[1:]), "http://"+host+"/")
	switch kind {
	case "timeout":
		return op + "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
	case "connection_refused":
		return op + "dial tcp " + host + ":80: connect: connection refused"
	case "connection_reset":
		return op + "read tcp " + host + ":80: read: connection reset by peer"
	case "connection_closed":
		return op + "EOF"
	case "http_503":
		return "503 Service Unavailable"
	}
	return kind
}

// vegetaBuckets encodes the histogram as vegeta's Histogram.MarshalJSON does: an
// object from each bucket's lower bound in nanoseconds to its count, in bucket
// order (which a Go map would not keep).
type vegetaBuckets []result.Bucket

func (bs vegetaBuckets) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteString("{")
	for i, k := range bs {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\"%d\":%d", int64(nanos(k.FromMS)), k.Count)
	}
	b.WriteString("}")
	return []byte(b.String()), nil
}

// ErrNoHistogram is VegetaHist's error for a result without buckets: vegeta's hist
// report needs them too (-buckets).
var ErrNoHistogram = errors.New("the result has no histogram: give its bounds with report --buckets '[0,1ms,10ms]' (vegeta's results), or set the scenario's spec.report.histogram and run it again")

// VegetaHist writes the histogram as `vegeta report -type=hist` does: Bucket, #, %
// and a bar of '#' per bucket. The text report prints the same table (writeHistogram),
// so this is that table on its own. Buckets count every finished request, failed
// ones too, as vegeta's do.
func VegetaHist(w io.Writer, r *result.Result) error {
	if len(r.Histogram) == 0 {
		return ErrNoHistogram
	}
	b := &strings.Builder{}
	writeHistogram(b, r)
	// writeHistogram opens with a blank line to separate it from the section before.
	_, err := io.WriteString(w, strings.TrimPrefix(b.String(), "\n"))
	return err
}
