package resultfile

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"trafficlab/result"
)

// readVegeta reads a vegeta attack's results, in whichever of its encodings
// vegetaDecoder recognises, into a Result of engine "vegeta" holding what vegeta
// knows and nothing else: counts by outcome, latencies, the window, bytes, codes
// and errors. It has no pods, clients, nodes or timeline: vegeta measures none of
// them, and a table of them would print zeros as if measured. Memory grows with
// the distinct errors, as vegeta report's does, not with the requests.
func readVegeta(rd io.Reader, bounds []time.Duration) (*result.Result, error) {
	dec := vegetaDecoder(rd)
	if dec == nil {
		return nil, errors.New("neither a trafficlab result (-o json) nor vegeta's results (gob, JSON or CSV)")
	}
	s := newVegetaSum()
	if bounds != nil {
		s.hist = &vegeta.Histogram{Buckets: bounds}
	}
	for i := 1; ; i++ {
		var v vegeta.Result
		err := dec.Decode(&v)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("vegeta result %d: %v", i, err)
		}
		if err := s.add(&v); err != nil {
			return nil, fmt.Errorf("vegeta result %d: %v", i, err)
		}
	}
	return s.result(), nil
}

// vegetaDecoder recognises vegeta's encodings in the order its DecoderFor tries
// them (lib/results.go): gob, JSON, then CSV, each by decoding the first result.
// What a try read is replayed to the next try and to the decoder chosen.
func vegetaDecoder(rd io.Reader) vegeta.Decoder {
	var read bytes.Buffer
	for _, open := range []vegeta.DecoderFactory{gobDecoder, vegeta.NewJSONDecoder, vegeta.NewCSVDecoder} {
		try := io.MultiReader(bytes.NewReader(read.Bytes()), io.TeeReader(rd, &read))
		if open(try).Decode(&vegeta.Result{}) == nil {
			return open(io.MultiReader(&read, rd))
		}
	}
	return nil
}

// vegetaGob is the part of vegeta's Result that trafficlab reads, as its gob
// encoder writes it. Gob skips the fields it lacks (Body, Method, URL, Headers),
// and skipping Headers is the point: decoding a map, encoding/gob makes it as
// large as the count the stream claims (decode.go, decodeMap), so a 2.5 KB file
// claiming millions of headers took 6 GB, where skipping reads entries only as
// far as the bytes go.
type vegetaGob struct {
	Attack            string
	Seq               uint64
	Code              uint16
	Timestamp         time.Time
	Latency           time.Duration
	BytesOut, BytesIn uint64
	Error             string
}

func gobDecoder(rd io.Reader) vegeta.Decoder {
	dec := gob.NewDecoder(rd)
	return func(v *vegeta.Result) error {
		var g vegetaGob
		if err := dec.Decode(&g); err != nil {
			return err
		}
		*v = vegeta.Result{Attack: g.Attack, Seq: g.Seq, Code: g.Code, Timestamp: g.Timestamp, Latency: g.Latency,
			BytesOut: g.BytesOut, BytesIn: g.BytesIn, Error: g.Error}
		return nil
	}
}

// vegetaSum adds vegeta results up as vegeta's Metrics.Add does (lib/metrics.go),
// and into the Result's terms.
type vegetaSum struct {
	n, ok                 int64
	errs                  result.Errors
	okLat, all            *hdr.Histogram // latencies in ns: successes, every request
	sum, min, max         int64
	okMin, okMax          int64 // the successes' exact extremes, which okLat knows to its bucket
	earliest, latest, end time.Time
	bytesOut, bytesIn     int64
	codes                 map[string]int64
	errors                []result.EndedError
	seen                  map[string]bool
	attack                string            // the attacks' name when they all share one
	hist                  *vegeta.Histogram // the --buckets histogram, when asked for
}

func newVegetaSum() *vegetaSum {
	return &vegetaSum{
		okLat: hdr.New(1, int64(time.Hour), 3), all: hdr.New(1, int64(time.Hour), 3),
		codes: map[string]int64{}, seen: map[string]bool{},
	}
}

func (s *vegetaSum) add(v *vegeta.Result) error {
	lat := int64(v.Latency)
	out, in := int64(min(v.BytesOut, 1<<62)), int64(min(v.BytesIn, 1<<62))
	if err := s.fits(lat, out, in); err != nil {
		return err
	}
	s.addTimes(v, lat)
	if s.hist != nil {
		s.hist.Add(v)
	}
	clamped := min(max(lat, 1), s.all.HighestTrackableValue())
	_ = s.all.RecordValue(clamped)
	s.bytesOut += out
	s.bytesIn += in
	s.codes[strconv.Itoa(int(v.Code))]++

	if s.n == 1 {
		s.attack = v.Attack
	} else if v.Attack != s.attack {
		s.attack = ""
	}

	// A success as vegeta counts one: a code from 200 to 399.
	if v.Code >= 200 && v.Code < 400 {
		s.ok++
		_ = s.okLat.RecordValue(clamped)
		if s.ok == 1 || lat < s.okMin {
			s.okMin = lat
		}
		s.okMax = max(s.okMax, lat)
	}
	kind := vegetaKind(v.Code, v.Error)
	if k, ok := result.ErrorKindNamed(kind); ok {
		s.errs.Add(k, 1)
	}
	if v.Error != "" && !s.seen[v.Error] {
		s.seen[v.Error] = true
		s.errors = append(s.errors, result.EndedError{Kind: kind, Message: v.Error})
	}
	return nil
}

// fits refuses a result the sums cannot hold: a latency below zero or over the hour
// every histogram ends at, or one that takes a sum beyond 2⁶³.
func (s *vegetaSum) fits(lat, bytesOut, bytesIn int64) error {
	if lat < 0 {
		return fmt.Errorf("latency %v is negative", time.Duration(lat))
	}
	// Every latency is summarised in histograms that end at an hour, as every
	// engine's do; a longer one (vegeta's default timeout is 30 s) would be reported
	// as an hour, and near 2⁶³ ns its end overflows the clock.
	if lat > int64(time.Hour) {
		return fmt.Errorf("latency %v is over the hour trafficlab's latency histograms hold", time.Duration(lat))
	}
	if s.sum+lat < s.sum {
		return errors.New("the latencies add up beyond 292 years")
	}
	if s.bytesOut+bytesOut < s.bytesOut || s.bytesIn+bytesIn < s.bytesIn {
		return errors.New("the byte counts add up beyond 2⁶³")
	}
	return nil
}

// addTimes adds a result's latency, lat ns, to the count, sum and extremes, and
// widens the window of its sends and ends.
func (s *vegetaSum) addTimes(v *vegeta.Result, lat int64) {
	if s.n == 0 {
		s.earliest, s.latest, s.end, s.min = v.Timestamp, v.Timestamp, v.End(), lat
	}
	s.n++
	s.sum += lat
	s.max = max(s.max, lat)
	// As LatencyMetrics.Add keeps it: a later latency replaces a minimum of 0, so
	// that vegeta-json gives the min vegeta report gives for this file.
	if lat < s.min || s.min == 0 {
		s.min = lat
	}
	if v.Timestamp.Before(s.earliest) {
		s.earliest = v.Timestamp
	}
	if v.Timestamp.After(s.latest) {
		s.latest = v.Timestamp
	}
	if end := v.End(); end.After(s.end) {
		s.end = end
	}
}

// vegetaKind names a vegeta result's failure as the Result's Errors do, from its
// code and the error Go's http.Client gave (lib/attack.go records err.Error());
// "" for a success and for failures no kind describes (another error status), which
// count in Requests.Failed only.
func vegetaKind(code uint16, msg string) string {
	switch {
	case code >= 200 && code < 400:
		return ""
	case code == 503:
		return "http_503"
	case code != 0:
		return ""
	case strings.Contains(msg, "Client.Timeout exceeded"), strings.Contains(msg, "context deadline exceeded"),
		strings.Contains(msg, "i/o timeout"), strings.Contains(msg, "timeout awaiting response headers"):
		return "timeout"
	case strings.Contains(msg, "connection refused"):
		return "connection_refused"
	case strings.Contains(msg, "connection reset by peer"), strings.Contains(msg, "broken pipe"):
		return "connection_reset"
	case strings.HasSuffix(msg, "EOF"), strings.Contains(msg, "server closed idle connection"):
		return "connection_closed"
	}
	return ""
}

func (s *vegetaSum) result() *result.Result {
	r := &result.Result{Engine: "vegeta", LatencyMS: result.LatencyBetween(s.okLat, s.okMin, s.okMax), LatencySpectrum: result.SpectrumOf(s.okLat),
		Requests: result.Requests{Total: s.n, OK: s.ok, Failed: s.n - s.ok}, Errors: s.errs}
	x := &result.Ended{LatencyMS: result.LatencyBetween(s.all, s.min, s.max), LatencySumNS: s.sum, LatencyMinNS: s.min, LatencyMaxNS: s.max,
		BytesOut: s.bytesOut, BytesIn: s.bytesIn, StatusCodes: s.codes, Errors: s.errors}
	if s.n > 0 {
		x.StartUnixNS = s.earliest.UnixNano()
		x.LastSentNS = int64(s.latest.Sub(s.earliest))
		x.LastEndNS = int64(s.end.Sub(s.earliest))
		// The Result's duration is the requests' window with the wait for the last
		// answers; its rates are vegeta's (Metrics.Close).
		r.DurationS = time.Duration(x.LastEndNS).Seconds()
		r.RateRPS, r.ThroughputRPS = float64(s.n), float64(s.ok)
		if secs := time.Duration(x.LastSentNS).Seconds(); secs > 0 {
			r.RateRPS = result.Round(r.RateRPS/secs, 3)
			r.ThroughputRPS = result.Round(r.ThroughputRPS/r.DurationS, 3)
		}
	}
	r.Ended = x
	r.Scenario = s.attack
	if h := s.hist; h != nil {
		for i, from := range h.Buckets {
			b := result.Bucket{FromMS: result.MS(int64(from))}
			if i < len(h.Counts) {
				b.Count = int64(h.Counts[i])
			}
			if i+1 < len(h.Buckets) {
				to := result.MS(int64(h.Buckets[i+1]))
				b.ToMS = &to
			}
			if h.Total > 0 {
				b.Share = result.Round(float64(b.Count)/float64(h.Total), 6) // as simulate rounds it
			}
			r.Histogram = append(r.Histogram, b)
		}
	}
	return r
}
