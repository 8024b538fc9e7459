package load

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"trafficlab/result"
)

// A client pod emulate runs as a process of its own streams what it measures as
// JSON lines: each timeline interval's latency histogram once it is final (what
// Config.OnInterval is given), then its Report, with the histograms and tallies a
// Report keeps out of its JSON, which merging the pods' Reports needs.
type frame struct {
	Interval *intervalFrame `json:"interval,omitempty"`
	Report   *reportFrame   `json:"report,omitempty"`
}

type intervalFrame struct {
	Sec     int64  `json:"sec"`
	Latency string `json:"latency"`
}

type reportFrame struct {
	*Report
	LatencyHistogram string            `json:"latency_histogram"`
	Tally            result.EndedTally `json:"ended_tally"`
	ErrorsAtNS       []int64           `json:"ended_errors_at_ns"`
}

// Stream writes a run's frames to one writer.
type Stream struct {
	mu  sync.Mutex
	enc *json.Encoder
	err error
}

// NewStream streams to w.
func NewStream(w io.Writer) *Stream { return &Stream{enc: json.NewEncoder(w)} }

// Interval is a Config.OnInterval that streams the interval; an error is kept for
// Report to return.
func (s *Stream) Interval(sec int64, h *hdr.Histogram) {
	enc, err := result.EncodeHistogram(h)
	s.write(frame{Interval: &intervalFrame{Sec: sec, Latency: enc}}, err)
}

// Report streams the run's report, the last frame, and returns the first error
// writing any frame met.
func (s *Stream) Report(rep *Report) error {
	enc, err := result.EncodeHistogram(rep.Latency)
	s.write(frame{Report: &reportFrame{Report: rep, LatencyHistogram: enc, Tally: rep.EndedTally, ErrorsAtNS: rep.EndedErrorsAtNS}}, err)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *Stream) write(f frame, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	if err == nil {
		err = s.enc.Encode(f)
	}
	s.err = err
}

// ReadStream reads a stream to its end, handing each interval to onInterval, and
// returns its Report; an error if the stream ends without one.
func ReadStream(r io.Reader, onInterval func(sec int64, h *hdr.Histogram)) (*Report, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20) // a Report with many pods and a long timeline is one line
	for sc.Scan() {
		var f frame
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			return nil, fmt.Errorf("reading a client pod's stream: %w", err)
		}
		switch {
		case f.Interval != nil:
			h, err := result.DecodeHistogram(f.Interval.Latency)
			if err != nil {
				return nil, err
			}
			onInterval(f.Interval.Sec, h)
		case f.Report != nil && f.Report.Report != nil:
			rep := f.Report.Report
			var err error
			if rep.Latency, err = result.DecodeHistogram(f.Report.LatencyHistogram); err != nil {
				return nil, err
			}
			rep.EndedTally, rep.EndedErrorsAtNS = f.Report.Tally, f.Report.ErrorsAtNS
			return rep, nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New("a client pod's stream ended without its report")
}

// ReadyPrefix begins the line `trafficlab load --stream` prints on stderr once
// its spec is checked and it waits for its start time: its pod is ready.
const ReadyPrefix = "load: ready"

// ReadyLine is that line, naming the trafficlab version that prints it.
func ReadyLine(version string) string {
	return ReadyPrefix + " (trafficlab " + version + "), waiting for the start time on stdin"
}

// ReadyVersion is the version a ready line names; false for another line.
func ReadyVersion(line string) (string, bool) {
	rest, ok := strings.CutPrefix(line, ReadyPrefix+" (trafficlab ")
	if !ok {
		return "", false
	}
	version, _, ok := strings.Cut(rest, ")")
	return version, ok
}
