package simulate

import (
	"testing"

	"trafficlab/result"
)

// Every request that ends is streamed once, with the outcome and bytes the totals
// count: the stream and the Result are two views of one run. Bytes are vegeta's
// (lib/attack.go): the request's body and the answer, none without an answer.
func TestStreamRequestsAgreesWithTheResult(t *testing.T) {
	// 250 requests a second of 10 ms onto 2 single-worker pods (ρ = 1.25): the queues
	// grow and requests time out at 1 s, so both outcomes are streamed.
	e := build(t, opts{duration: "10s", seed: 3, replicas: 2,
		pod:    "      concurrency: 1\n      serviceTime: {distribution: constant, value: 10ms}\n      responseBytes: 1500",
		client: "    rate: 250/s\n    timeout: 1s\n    library: curl-loop\n    request: {bodyBytes: 700, headerBytes: 300}"})
	ok, byKind, byPod := int64(0), map[string]int64{}, map[string]int64{}
	var out, in int64
	seen := map[uint64]bool{}
	e.StreamRequests(func(r *result.Request) {
		if seen[r.Seq] {
			t.Fatalf("request %d streamed twice", r.Seq)
		}
		seen[r.Seq] = true
		if r.Seq >= uint64(e.Requests()) || r.LatencyNS <= 0 || r.Client != "caller" || r.Service != "web" || r.Method != "GET" {
			t.Fatalf("request %+v", *r)
		}
		out, in = out+r.BytesOut, in+r.BytesIn
		switch {
		case r.Error == "" && r.Code == 200:
			if r.BytesOut != 700 || r.BytesIn != 1500 {
				t.Fatalf("an answered request's bytes: %d out, %d in; want the body's 700 and the answer's 1500", r.BytesOut, r.BytesIn)
			}
			ok++
			byPod[r.Pod]++
		case r.Error != "" && r.Code == 0:
			if r.BytesOut != 0 || r.BytesIn != 0 {
				t.Fatalf("a request without an answer has no bytes: %d out, %d in", r.BytesOut, r.BytesIn)
			}
			byKind[r.Error]++
		default:
			t.Fatalf("code %d with error %q", r.Code, r.Error)
		}
	})
	e.Run(nil)
	res := e.Result()
	if ok != res.Requests.OK || byKind["timeout"] != res.Errors.Timeout || len(byKind) != 1 {
		t.Errorf("streamed %d ok and %v; the result has %d ok and %+v", ok, byKind, res.Requests.OK, res.Errors)
	}
	if x := res.Ended; x == nil || x.BytesOut != out || x.BytesIn != in || x.StatusCodes["200"] != ok || x.StatusCodes["0"] != res.Errors.Timeout {
		t.Errorf("streamed %d bytes out, %d in; the result's ended: %+v", out, in, res.Ended)
	}
	if res.Errors.Timeout == 0 || ok == 0 {
		t.Fatalf("want successes and timeouts, got %d and %d", ok, res.Errors.Timeout)
	}
	for _, p := range res.Pods {
		// A pod's count includes the requests it took that then timed out at the client.
		if byPod[p.Name] == 0 || byPod[p.Name] > p.Requests {
			t.Errorf("%s: %d answered in the stream, %d taken in the result", p.Name, byPod[p.Name], p.Requests)
		}
	}
}
