package report

import (
	"strings"
	"testing"

	"trafficlab/result"
)

// The text report names how TCP repaired its losses and what that cost; sidecars whose
// workers are saturated get the concurrency advice; buckets print as vegeta's hist.
func TestTextNetworkSections(t *testing.T) {
	to := 2.0
	base := result.Result{Engine: "simulate", DurationS: 10, ThroughputRPS: 1000,
		LatencyMS: result.Latency{P99: 220}, Pods: pods(10)}
	cases := []struct {
		name string
		set  func(r *result.Result)
		want []string
		not  []string
	}{
		{"probes", func(r *result.Result) {
			r.TCP = &result.TCP{Connections: 30, Segments: 1000, Retransmits: 10, TLPEvents: 9, RTOEvents: 1}
		}, []string{"10 retransmitted (1.00%): 0 by fast retransmit, 9 tail loss probes, 1 RTO timeout,",
			"Most losses (10 of 10 repairs) were found by the tail loss probe", "(p99 220.000ms)"}, []string{"head-of-line"}},
		{"probes, a tail shorter than what they cost", func(r *result.Result) {
			r.LatencyMS.P99 = 5.333
			r.TCP = &result.TCP{Connections: 30, Segments: 1000, Retransmits: 4, TLPEvents: 1, RTOEvents: 3}
		}, []string{"Most losses (4 of 4 repairs) were found by the tail loss probe",
			"the p99 (5.333ms) is below that, so fewer than 1 in 100 successful requests paid it."},
			[]string{"which is what the slowest requests paid", "SYNs went unanswered"}},
		{"SYNs sent again during a partition", func(r *result.Result) {
			r.LatencyMS.P99 = 5.333
			r.TCP = &result.TCP{Connections: 15152, Segments: 383613, Retransmits: 4, TLPEvents: 1, RTOEvents: 3, SynRetransmits: 1906}
			r.Faults = []result.Fault{{Name: "cut", Kind: "partition", Target: "pod web-1", Direction: "both", StartS: 10, EndS: 20},
				{Kind: "delay", Target: "service web", StartS: 0, EndS: 10}}
		}, []string{"Network faults that ran: cut: partition of pod web-1 (both ways), 10s–20s; delay of service web, 0s–10s.",
			"1906 SYNs went unanswered and were sent again: connections could not be opened",
			"A fault that dropped packets ran (listed above).", "fewer than 1 in 100"},
			[]string{"which is what the slowest requests paid"}},
		{"SYNs sent again, a delay the only fault", func(r *result.Result) {
			r.TCP = &result.TCP{Connections: 10, Segments: 1000, SynRetransmits: 3}
			r.Faults = []result.Fault{{Kind: "delay", Target: "service web", Peer: "client load", Direction: "to", StartS: 0, EndS: 10},
				{Kind: "pod-kill", Target: "pod web-0", StartS: 5, EndS: 5}}
		}, []string{"Network faults that ran: delay of service web and client load (packets it sends), 0s–10s."},
			[]string{"dropped packets", "pod-kill"}},
		{"SYNs sent again, nothing else lost, no fault", func(r *result.Result) {
			r.TCP = &result.TCP{Connections: 10, Segments: 1000, SynRetransmits: 3}
		}, []string{"3 SYNs went unanswered and were sent again"}, []string{"Most losses", "faults"}},
		{"head of line", func(r *result.Result) {
			r.TCP = &result.TCP{Connections: 2, Segments: 1000, Retransmits: 10, FastRetransmits: 9, TLPEvents: 1}
		}, []string{"Most losses (9 of 10 repairs) were fast retransmits", "2 connections carried about 500 requests a second each", "head-of-line"}, nil},
		{"no loss", func(r *result.Result) { r.TCP = &result.TCP{Connections: 2, Segments: 1000} },
			[]string{"TCP: 2 connections, 1000 segments, 0 retransmitted"}, []string{"Most losses"}},
		{"saturated sidecar", func(r *result.Result) {
			r.Sidecars = []result.Sidecar{{Pod: "vegeta-0", Direction: "outbound", Workers: 2, WorkerUtilization: 1, CPUCores: 2},
				{Pod: "web-0", Direction: "inbound", Workers: 2, WorkerUtilization: 0.25, CPUCores: 0.5, CPULimit: 2, CPUUtilization: 0.25}}
		}, []string{"The outbound sidecar of vegeta-0 keeps its 2 worker threads busy 100% of the time",
			"it has no CPU limit and uses 2.00 cores", "Errors     [timeout, refused, reset, closed, 503]"}, []string{"sidecar of web-0 keeps"}},
		{"buckets", func(r *result.Result) {
			r.Histogram = []result.Bucket{{FromMS: 0, ToMS: &to, Count: 3, Share: 0.75}, {FromMS: 2, Count: 1, Share: 0.25}}
		}, []string{"Bucket", "[0s,", "2ms]", "75.00%", "+Inf]", strings.Repeat("#", 56)}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := base
			tc.set(&r)
			var b strings.Builder
			if err := Text(&b, &r); err != nil {
				t.Fatal(err)
			}
			out := strings.Join(strings.Fields(b.String()), " ")
			for _, w := range tc.want {
				if !strings.Contains(out, strings.Join(strings.Fields(w), " ")) {
					t.Errorf("report lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range tc.not {
				if strings.Contains(out, w) {
					t.Errorf("report has %q:\n%s", w, b.String())
				}
			}
		})
	}
}
