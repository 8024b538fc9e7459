package load_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"trafficlab/emulate/load"
	"trafficlab/result"
	"trafficlab/scenario"
)

// TestStreamRoundTrip: a run streamed as a client pod's process streams it reads
// back as the same Report, histograms and tallies included, and its intervals in
// order with what each held.
func TestStreamRoundTrip(t *testing.T) {
	srv := newPods(t, 2, false, nil)
	c := cfg(srv.URL, 2, 1500*time.Millisecond, scenario.ReuseNone)
	var buf bytes.Buffer
	st := load.NewStream(&buf)
	var sent []int64
	c.OnInterval = func(sec int64, h *hdr.Histogram) {
		sent = append(sent, h.TotalCount())
		st.Interval(sec, h)
	}
	rep := run(t, c)
	if err := st.Report(rep); err != nil {
		t.Fatal(err)
	}
	var got []int64
	back, err := load.ReadStream(&buf, func(sec int64, h *hdr.Histogram) {
		if sec != int64(len(got)) {
			t.Errorf("interval %d read as %d", len(got), sec)
		}
		got = append(got, h.TotalCount())
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != 2 || !slices.Equal(got, sent) {
		t.Errorf("intervals read %v, sent %v", got, sent)
	}
	a, _ := json.Marshal(rep)
	b, _ := json.Marshal(back)
	if !bytes.Equal(a, b) {
		t.Errorf("the report read back differs:\n%s\n%s", a, b)
	}
	if !back.Latency.Equals(rep.Latency) || back.Latency.TotalCount() != rep.Requests.OK {
		t.Errorf("latency histogram: %d read back, %d sent", back.Latency.TotalCount(), rep.Latency.TotalCount())
	}
	x, y := result.NewEndedTally(), result.NewEndedTally()
	x.Merge(&rep.EndedTally)
	y.Merge(&back.EndedTally)
	if xe, ye := x.Ended(), y.Ended(); xe.LatencyMS != ye.LatencyMS || xe.BytesIn != ye.BytesIn || x.Recorded() != y.Recorded() || x.Recorded() == 0 {
		t.Errorf("ended tally: %+v read back, %+v sent", y.Ended(), x.Ended())
	}
	if !slices.Equal(back.EndedErrorsAtNS, rep.EndedErrorsAtNS) {
		t.Errorf("errors' times %v read back, %v sent", back.EndedErrorsAtNS, rep.EndedErrorsAtNS)
	}
}

// A stream cut before its report is an error, not an empty report.
func TestStreamWithoutReport(t *testing.T) {
	var buf bytes.Buffer
	load.NewStream(&buf).Interval(0, hdr.New(1, 1e9, 2))
	if _, err := load.ReadStream(&buf, func(int64, *hdr.Histogram) {}); err == nil {
		t.Error("no error for a stream without a report")
	}
}
