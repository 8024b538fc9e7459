package load_test

import (
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"trafficlab/emulate/load"
	"trafficlab/result"
	"trafficlab/scenario"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// What TestEnded's runs send and answer.
const (
	requests  = 60
	bodyBytes = 37
	timeout   = 150 * time.Millisecond
	failBody  = "broken"
)

// endedChunks are the parts of a chunked answer.
var endedChunks = [2]string{"abc", "defgh"}

// TestEnded: Report.Ended counts every request that ended as the server saw them:
// one in ten answered after the client's timeout, one in ten with a 500 and its
// own body, one in ten with a chunked body, the rest with "ok"; every request
// with a body. The server's own counts
// are the reference, and a refused port gives only code 0, no bytes and one
// distinct error.
func TestEnded(t *testing.T) {
	clients(t, func(t *testing.T, client string) {
		t.Run("answers, timeouts and a 500", func(t *testing.T) { endedAnswersTimeoutsAnd500(t, client) })
		t.Run("refused", func(t *testing.T) { endedRefused(t, client) })
	})
}

// endedAnswersTimeoutsAnd500: a run of 60 requests, a tenth of them timing out, a tenth
// answered chunked and a tenth with a 500, sums as vegeta does.
// endedPod answers every tenth request of ten late, chunked or with a 500, and
// counts what it saw.
type endedPod struct {
	mu                                         sync.Mutex
	seen, ok, chunked, failed, slow, badBodies int
}

func (p *endedPod) handle(w http.ResponseWriter, r *http.Request) bool {
	b, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	i := p.seen
	p.seen++
	if len(b) != bodyBytes {
		p.badBodies++
	}
	switch i % 10 {
	case 3:
		p.slow++
	case 5:
		p.chunked++
	case 7:
		p.failed++
	default:
		p.ok++
	}
	p.mu.Unlock()
	switch i % 10 {
	case 3:
		select { // well past the client's timeout, which drops the connection
		case <-r.Context().Done():
		case <-time.After(10 * timeout):
		}
		return true
	case 5: // flushed in two parts: a chunked body, whose bytes are its chunks' data
		_, _ = w.Write([]byte(endedChunks[0]))
		w.(http.Flusher).Flush()
		_, _ = w.Write([]byte(endedChunks[1]))
		return true
	case 7:
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(failBody))
		return true
	}
	return false // "ok"
}

func endedAnswersTimeoutsAnd500(t *testing.T, client string) {
	pod := &endedPod{}
	srv := newPods(t, 1, false, pod.handle)
	c := cfg(srv.URL, 1, 20*time.Second, scenario.ReuseShared)
	c.HTTPClient, c.MaxRequests, c.Timeout = client, requests, timeout
	c.Method, c.BodyBytes = http.MethodPost, bodyBytes
	before := time.Now()
	rep := run(t, c)
	after := time.Now()
	x := rep.Ended
	pod.mu.Lock()
	defer pod.mu.Unlock()
	seen, ok, chunked, failed, slow, badBodies := pod.seen, pod.ok, pod.chunked, pod.failed, pod.slow, pod.badBodies
	if seen != requests || badBodies != 0 {
		t.Fatalf("the server saw %d requests, %d without the whole body; want %d", seen, badBodies, requests)
	}
	answered := int64(ok + chunked + failed)
	want := map[string]int64{"200": int64(ok + chunked), "500": int64(failed), "0": int64(slow)}
	if len(x.StatusCodes) != len(want) {
		t.Errorf("codes %v, want %v", x.StatusCodes, want)
	}
	for code, n := range want {
		if x.StatusCodes[code] != n {
			t.Errorf("code %s: %d, want %d (codes %v)", code, x.StatusCodes[code], n, x.StatusCodes)
		}
	}
	if rep.Requests.Total != requests || rep.EndedTally.Recorded() != requests {
		t.Errorf("requests %+v, %d latencies; want %d", rep.Requests, rep.EndedTally.Recorded(), requests)
	}
	if wantIn := int64(ok*len("ok") + chunked*len(endedChunks[0]+endedChunks[1]) + failed*len(failBody)); x.BytesIn != wantIn || x.BytesOut != answered*bodyBytes {
		t.Errorf("bytes in %d, out %d; want %d and %d", x.BytesIn, x.BytesOut, wantIn, answered*bodyBytes)
	}
	// A timed-out request took at least the timeout; each one did, so the sum is at
	// least their number times it.
	if x.LatencyMaxNS < int64(timeout) || x.LatencySumNS < int64(slow)*int64(timeout) || x.LatencyMinNS <= 0 || x.LatencyMinNS > x.LatencyMaxNS {
		t.Errorf("latency min %d max %d sum %d ns, want max and sum/%d at least the timeout %v", x.LatencyMinNS, x.LatencyMaxNS, x.LatencySumNS, slow, timeout)
	}
	if l := x.LatencyMS; l.Max*1e6 < float64(timeout) || l.P50 > l.Max || l.Min > l.P50 {
		t.Errorf("latency summary %+v", l)
	}
	if x.FirstSentNS < 0 || x.FirstSentNS > x.LastSentNS || x.LastSentNS > x.LastEndNS || time.Duration(x.LastEndNS) > after.Sub(before) {
		t.Errorf("first sent %d, last sent %d, last end %d ns; the run took %v", x.FirstSentNS, x.LastSentNS, x.LastEndNS, after.Sub(before))
	}
	if x.StartUnixNS < before.UnixNano() || x.StartUnixNS > after.UnixNano() {
		t.Errorf("start %d is not within the run [%d, %d]", x.StartUnixNS, before.UnixNano(), after.UnixNano())
	}
	checkEndedErrors(t, rep, c.Target, slow)
}

// checkEndedErrors: the 500 reads as its status line, once; each timeout is a
// timeout (the trafficlab client's messages name the connection, so they may be
// distinct), at most slow of them; they are listed in the order first seen.
func checkEndedErrors(t *testing.T, rep *load.Report, target string, slow int) {
	t.Helper()
	x := rep.Ended
	statuses, timeouts := 0, 0
	distinct := map[string]bool{}
	for _, e := range x.Errors {
		if distinct[e.Message] {
			t.Errorf("error %q listed twice", e.Message)
		}
		distinct[e.Message] = true
		switch {
		case e.Message == "500 Internal Server Error" && e.Kind == "":
			statuses++
		case e.Kind == result.ErrorTimeout.String() && strings.HasPrefix(e.Message, `Post "`+target+`": `):
			timeouts++
		default:
			t.Errorf("error %+v is neither the 500 nor a timeout", e)
		}
	}
	if statuses != 1 || timeouts < 1 || timeouts > slow || len(rep.EndedErrorsAtNS) != len(x.Errors) {
		t.Errorf("errors %+v at %v: want the 500 once and 1 to %d timeouts", x.Errors, rep.EndedErrorsAtNS, slow)
	}
	for i := 1; i < len(rep.EndedErrorsAtNS); i++ {
		if rep.EndedErrorsAtNS[i] < rep.EndedErrorsAtNS[i-1] {
			t.Errorf("errors first seen at %v: not in order", rep.EndedErrorsAtNS)
		}
	}
}

// endedRefused: requests to a closed port are counted without an answer.
func endedRefused(t *testing.T, client string) {
	c := cfg(closedPort(t), 2, 5*time.Second, scenario.ReuseShared)
	c.HTTPClient, c.MaxRequests, c.BodyBytes = client, 20, bodyBytes
	rep := run(t, c)
	x := rep.Ended
	if x.StatusCodes["0"] != 20 || len(x.StatusCodes) != 1 || x.BytesIn != 0 || x.BytesOut != 0 {
		t.Errorf("codes %v, bytes in %d out %d; want 20 without an answer and no bytes", x.StatusCodes, x.BytesIn, x.BytesOut)
	}
	if len(x.Errors) != 1 || x.Errors[0].Kind != result.ErrorConnectionRefused.String() || !strings.Contains(x.Errors[0].Message, "connection refused") {
		t.Errorf("errors %+v, want one connection refused", x.Errors)
	}
	if n := rep.EndedTally.Recorded(); n != 20 || rep.Requests.Total != 20 {
		t.Errorf("%d latencies, requests %+v; want 20", n, rep.Requests)
	}
}

// TestMergeEnded: two client pods' Ended merge as one vegeta report of all their
// requests: sums add, the extremes and the window span both, codes add, and an
// error both saw is listed once, where it was first seen (pod b, earlier); a pod
// whose requests never ended adds nothing, not its zero minimum.
func TestMergeEnded(t *testing.T) {
	ms := func(f float64) int64 { return int64(f * float64(time.Millisecond)) }
	histOf := func(ns ...int64) *hdr.Histogram {
		h := hdr.New(1, int64(time.Hour), 3)
		for _, v := range ns {
			_ = h.RecordValue(v)
		}
		return h
	}
	const start = int64(1_700_000_000_000_000_000)
	timeout := result.EndedError{Kind: result.ErrorTimeout.String(), Method: "GET", Message: `Get "http://web/": i/o timeout`}
	status := result.EndedError{Method: "GET", Message: "500 Internal Server Error"}
	// report is a client pod's Report of its requests (latency, sent, end, bytes out,
	// bytes in), with the codes and errors load gives them.
	report := func(total, ok int64, reqs [][5]int64, codes map[string]int64, errs []result.EndedError, at []int64) *load.Report {
		tally := result.NewEndedTally()
		for _, q := range reqs {
			tally.Add(q[0], q[1], q[2], q[3], q[4])
		}
		x := tally.Ended()
		x.StartUnixNS, x.StatusCodes, x.Errors = start, codes, errs
		return &load.Report{Requests: result.Requests{Total: total, OK: ok, Failed: total - ok}, Ended: x, EndedTally: tally, EndedErrorsAtNS: at}
	}
	a := report(3, 2, [][5]int64{{ms(1), 5, 150, 10, 2}, {ms(2), 50, 200, 10, 2}, {ms(10), 100, 120, 0, 0}},
		map[string]int64{"200": 2, "0": 1}, []result.EndedError{timeout}, []int64{150})
	b := report(2, 1, [][5]int64{{ms(0.5), 1, 300, 10, 9}, {ms(4), 90, 100, 10, 0}},
		map[string]int64{"200": 1, "500": 1}, []result.EndedError{status, timeout}, []int64{50, 120})
	idle := report(0, 0, nil, map[string]int64{}, nil, nil)
	want := &result.Ended{
		LatencyMS:    result.LatencyBetween(histOf(ms(1), ms(2), ms(10), ms(0.5), ms(4)), ms(0.5), ms(10)),
		LatencySumNS: ms(17.5), LatencyMinNS: ms(0.5), LatencyMaxNS: ms(10),
		FirstSentNS: 1, LastSentNS: 100, LastEndNS: 300, StartUnixNS: start, BytesOut: 40, BytesIn: 13,
		StatusCodes: map[string]int64{"200": 3, "0": 1, "500": 1}, Errors: []result.EndedError{status, timeout},
	}
	for _, tc := range []struct {
		name string
		reps []*load.Report
		want *result.Ended
	}{
		{"two pods", []*load.Report{a, b}, want},
		{"either order", []*load.Report{b, a}, want},
		{"a pod without requests adds nothing", []*load.Report{idle, a, b}, want},
		{"a pod without Ended leaves none", []*load.Report{a, {}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := load.MergeEnded(tc.reps); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("merged\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}
