package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
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
// Two differences are the Result's, not the format's:
//   - vegeta's latencies cover every request, failed ones included; a Result's
//     latencies (LatencyMS) are of successful requests only, and so are these.
//   - a Result has no wall clock: times are simulated seconds after vegetaEpoch.

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

// VegetaJSON writes the result as `vegeta report -type=json` does: one line of JSON.
//
//   - latencies: of successful requests (see above), in integer nanoseconds; total
//     is mean × successes, the sum vegeta keeps.
//   - buckets: the scenario's report.histogram, keyed by each bucket's lower bound
//     in nanoseconds, as `vegeta report -type=json -buckets` adds; absent without one.
//   - bytes_in, bytes_out: 0. The engines model requests, not bodies, and a Result
//     has no byte counts to report; a made-up payload size would read as measured.
//   - earliest is the run's start, latest and end its end, so duration is the
//     simulated duration and wait 0: requests still in flight when a run ends are not
//     counted, so every counted one ended by then.
//   - rate and throughput are the Result's: requests sent, and successful, per
//     second, vegeta's meanings (its throughput divides by duration + wait).
//   - success: successful requests over requests.
//   - status_codes: "200" for successes, "503" for a sidecar's 503s, "0" for
//     timeouts and connection errors, which never got a response: vegeta leaves a
//     result's code 0 then.
//   - errors: one message per error kind that occurred (vegetaErrors).
func VegetaJSON(w io.Writer, r *result.Result) error {
	l := r.LatencyMS
	m := vegetaMetrics{
		Latencies: vegetaLatencies{
			Total: nanos(l.Mean * float64(r.Requests.OK)),
			Mean:  nanos(l.Mean), P50: nanos(l.P50), P90: nanos(l.P90), P95: nanos(l.P95), P99: nanos(l.P99),
			Max: nanos(l.Max), Min: nanos(l.Min),
		},
		Buckets:     r.Histogram,
		Earliest:    vegetaEpoch,
		Latest:      vegetaEpoch.Add(seconds2duration(r.DurationS)),
		End:         vegetaEpoch.Add(seconds2duration(r.DurationS)),
		Duration:    seconds2duration(r.DurationS),
		Requests:    r.Requests.Total,
		Rate:        r.RateRPS,
		Throughput:  r.ThroughputRPS,
		Success:     ratio(r.Requests.OK, r.Requests.Total),
		StatusCodes: vegetaStatusCodes(r),
		Errors:      vegetaErrors(r),
	}
	// vegeta's Encoder, without indentation, ends the line with a newline.
	return json.NewEncoder(w).Encode(m)
}

// nanos converts milliseconds to a duration, rounded to the nanosecond.
func nanos(ms float64) time.Duration {
	return time.Duration(math.Round(ms * float64(time.Millisecond)))
}

func seconds2duration(s float64) time.Duration {
	return time.Duration(math.Round(s * float64(time.Second)))
}

// vegetaStatusCodes counts requests by the code vegeta would record: the response's
// status, or 0 when there was none. Codes with no request are left out, as vegeta
// only has the codes it saw.
func vegetaStatusCodes(r *result.Result) map[string]int64 {
	codes := map[string]int64{}
	e := r.Errors
	for code, n := range map[string]int64{
		"200": r.Requests.OK,
		"503": e.HTTP503,
		"0":   e.Timeout + e.ConnectionRefused + e.ConnectionReset + e.ConnectionClosed,
	} {
		if n > 0 {
			codes[code] = n
		}
	}
	return codes
}

// vegetaErrors lists one message per error kind that occurred, in the order of
// result.Errors (vegeta lists them as first seen; a Result keeps no order). vegeta
// records the error of Go's http.Client.Do, a *url.Error around a *net.OpError, or
// the status line for a code outside 200–399. The messages are Go's wording for
// these failures on a GET of the service; a Result has no IPs or ports, so the
// address is the service's name and port 80, and there is no local address:
//
//	timeout   Get "http://web/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)
//	refused   Get "http://web/": dial tcp web:80: connect: connection refused
//	reset     Get "http://web/": read tcp web:80: read: connection reset by peer
//	closed    Get "http://web/": EOF
//	http_503  503 Service Unavailable
func vegetaErrors(r *result.Result) []string {
	host := vegetaHost(r)
	e := r.Errors
	out := []string{} // vegeta writes [] when there were none, not null
	for _, k := range errorKinds {
		if k.of(e) > 0 {
			out = append(out, vegetaError(k.name, "GET", host))
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

// vegetaHost is the service the clients called: their one target, else the one
// service; with several, errors are not split by service in a Result, so the
// messages name none ("service").
func vegetaHost(r *result.Result) string {
	targets := map[string]bool{}
	for _, c := range r.Clients {
		targets[c.Target] = true
	}
	if len(targets) == 1 {
		return r.Clients[0].Target
	}
	if s := services(r); len(targets) == 0 && len(s) == 1 {
		return s[0]
	}
	return "service"
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
var ErrNoHistogram = errors.New("the result has no histogram: set the scenario's spec.report.histogram bucket bounds")

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
