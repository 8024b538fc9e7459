package emulate

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"trafficlab/emulate/emutest"
	"trafficlab/emulate/load"
	"trafficlab/model/kubeproxy"
	"trafficlab/result"
	"trafficlab/resultfile"
	"trafficlab/scenario"
)

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
			if got := mergeEnded(tc.reps); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("merged\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

// TestEndedForReal: a scenario with two client pods, run for real, sums up every
// request that ended in the Result's Ended, which passes the checks a Result read
// from a file must (resultfile.Check), on the wall clock of the run.
func TestEndedForReal(t *testing.T) {
	emutest.NeedRoot(t, "ip", "iptables-restore", "nft")
	doc := strings.Replace(fmt.Sprintf(smallCluster, kubeproxy.Iptables, scenario.ReusePerThread),
		"    threads: 2\n", "    threads: 2\n    replicas: 2\n", 1)
	before := time.Now()
	r := emulateDoc(t, "small.yaml", doc)
	after := time.Now()
	x := r.Ended
	if x == nil || r.Requests.Total == 0 || x.StatusCodes["200"] != r.Requests.Total || len(x.StatusCodes) != 1 ||
		x.LatencyMinNS <= 0 || x.StartUnixNS < before.UnixNano() || x.StartUnixNS > after.UnixNano() {
		t.Fatalf("ended %+v for requests %+v, run from %d to %d", x, r.Requests, before.UnixNano(), after.UnixNano())
	}
	if len(r.Clients) != 1 || r.Clients[0].Replicas != 2 {
		t.Errorf("clients %+v, want one of 2 replicas", r.Clients)
	}
	if err := resultfile.Check(r); err != nil {
		t.Error(err)
	}
}
