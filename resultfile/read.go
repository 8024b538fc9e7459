// Package resultfile reads the runs that report and compare take: a Result written
// with -o json by any engine (simulate, emulate, load), or a real vegeta attack's
// results in any of vegeta's encodings (gob, JSON, CSV), told apart by content, so
// that a real attack sits beside a simulation. Every Result read is checked: one a
// run cannot produce is refused with the field that says so.
package resultfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"trafficlab/result"
)

// MaxResultBytes bounds a Result file, which is read whole. The largest a run
// writes: spec.report.samples' 1,000,000 samples at about 45 B each, 10,000 pods
// (the scenario's maxPods) at about 500 B, a timeline of MaxTimelinePoints at up to
// a few kB with many services: about 60 MB. A 47 MB file took 3.75 s and 365 MB
// to read, so the bound is what a run can reach, not more.
const MaxResultBytes = 64 << 20

// Engines are the engines whose Results this version reads; "vegeta" is a real
// vegeta attack read from its results.
var Engines = []string{"simulate", "emulate", "cluster", "load", "vegeta"}

// Error is a file that is not a run, or a run that cannot be: the file, and the
// field at fault when one is.
type Error struct {
	File  string
	Field string
	Err   error
}

func (e *Error) Error() string {
	s := e.Err.Error()
	if e.Field != "" {
		s = e.Field + ": " + s
	}
	if e.File != "" {
		s = e.File + ": " + s
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Read reads the run in the file at path.
func Read(path string) (*result.Result, error) {
	return ReadBucketed(path, nil)
}

// ReadBucketed reads the run in the file at path with its histogram over the
// bucket bounds given (vegeta's report -type=hist[...] syntax, ParseBuckets); none
// keeps the histogram the file has.
func ReadBucketed(path string, bounds []time.Duration) (*result.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return DecodeBucketed(path, f, bounds)
}

// Decode reads one run from rd, named name in errors. A JSON object with an engine
// field is a Result; vegeta's results are recognised as its DecoderFor does
// (lib/results.go): gob, one JSON object a line, or CSV.
func Decode(name string, rd io.Reader) (*result.Result, error) {
	return DecodeBucketed(name, rd, nil)
}

// DecodeBucketed is Decode with a histogram over bounds. Vegeta's results hold
// every request's latency, so their histogram is exact, counted as vegeta's
// Histogram.Add counts it (every request, failed ones too). A Result holds only
// the histogram its run was asked for: bounds other than its own are an error
// that says how to get them.
func DecodeBucketed(name string, rd io.Reader, bounds []time.Duration) (*result.Result, error) {
	r, err := decode(name, rd, bounds)
	if err != nil || bounds == nil || r.Engine == "vegeta" {
		return r, err
	}
	if !sameBounds(r.Histogram, bounds) {
		return nil, &Error{File: name, Err: fmt.Errorf("a %s result keeps only the histogram its run was asked for; run it again with --set 'spec.report.histogram=%s'",
			r.Engine, formatBuckets(bounds))}
	}
	return r, nil
}

func sameBounds(h []result.Bucket, bounds []time.Duration) bool {
	if len(h) != len(bounds) {
		return false
	}
	for i, b := range h {
		if b.FromMS != result.MS(int64(bounds[i])) {
			return false
		}
	}
	return true
}

// ParseBuckets reads bucket bounds as vegeta report -type=hist[...] takes them
// (vegeta's Buckets.UnmarshalText): [0,1ms,10ms], a 0 bound added first when the
// first is above it. The bounds must rise.
func ParseBuckets(s string) ([]time.Duration, error) {
	var b vegeta.Buckets
	if err := b.UnmarshalText([]byte(s)); err != nil {
		return nil, fmt.Errorf("%q: %v; want bounds as vegeta takes them, e.g. '[0,1ms,10ms,100ms]'", s, err)
	}
	for i := 1; i < len(b); i++ {
		if b[i] <= b[i-1] {
			return nil, fmt.Errorf("%q: %s is not above %s: the bounds must rise", s, b[i], b[i-1])
		}
	}
	if b[0] < 0 {
		return nil, fmt.Errorf("%q: %s is negative", s, b[0])
	}
	return b, nil
}

func formatBuckets(bounds []time.Duration) string {
	parts := make([]string, len(bounds))
	for i, b := range bounds {
		parts[i] = b.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func decode(name string, rd io.Reader, bounds []time.Duration) (*result.Result, error) {
	br := bufio.NewReaderSize(rd, 1<<16)
	head, _ := br.Peek(1 << 16)
	trimmed := bytes.TrimLeft(head, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, &Error{File: name, Err: errors.New("empty: want a result written with -o json, or vegeta's results")}
	}
	// vegeta's JSON encoder writes each result's fields in its struct's order,
	// attack first (lib/results_easyjson.go).
	if trimmed[0] == '{' && !bytes.HasPrefix(trimmed, []byte(`{"attack":`)) {
		data, err := io.ReadAll(io.LimitReader(br, MaxResultBytes+1))
		if err != nil {
			return nil, &Error{File: name, Err: err}
		}
		if len(data) > MaxResultBytes {
			return nil, &Error{File: name, Err: fmt.Errorf("over %d MB: no run writes a Result that large", MaxResultBytes>>20)}
		}
		return checked(name)(decodeResult(data))
	}
	return checked(name)(readVegeta(br, bounds))
}

// checked names the file in a reading error and checks what was read.
func checked(name string) func(*result.Result, error) (*result.Result, error) {
	return func(r *result.Result, err error) (*result.Result, error) {
		if err == nil {
			err = Check(r)
		}
		var e *Error
		switch {
		case errors.As(err, &e):
			e.File = name
			return nil, e
		case err != nil:
			return nil, &Error{File: name, Err: err}
		}
		return r, nil
	}
}

// decodeResult decodes a Result written with -o json, and names the other JSON
// documents trafficlab and vegeta write when given one of them instead.
func decodeResult(data []byte) (*result.Result, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return nil, fmt.Errorf("not a trafficlab result (-o json): %v", err)
	}
	_, hasEngine := keys["engine"]
	_, hasPoints := keys["points"]
	_, hasLatencies := keys["latencies"]
	_, hasPool := keys["pool"]
	switch {
	case hasEngine && hasPoints:
		return nil, errors.New("a sweep's result: report and compare take one run's (simulate -o json)")
	case hasLatencies && !hasEngine:
		return nil, errors.New("a vegeta report (vegeta report -type=json), not results: give the file vegeta attack wrote")
	case hasPool && !hasEngine:
		return nil, errors.New("a load report of an older trafficlab: run load -o json again, it now writes a result")
	case !hasEngine:
		return nil, errors.New("not a trafficlab result (-o json): no engine field")
	}
	// A timeline longer than any engine writes is refused before it is decoded: its
	// points cost far more memory as structs than as text.
	if raw, ok := keys["timeline"]; ok {
		var points []json.RawMessage
		if json.Unmarshal(raw, &points) == nil && len(points) > MaxTimelinePoints {
			return nil, &Error{Field: "timeline", Err: fmt.Errorf("%d points; no engine writes more than %d (it widens the interval instead)", len(points), MaxTimelinePoints)}
		}
	}
	var r result.Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("not a trafficlab result (-o json): %v", err)
	}
	return &r, nil
}
