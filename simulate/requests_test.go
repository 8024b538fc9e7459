package simulate

import (
	"testing"

	"trafficlab/result"
)

// Every request that ends is streamed once, with the outcome the totals count: the
// stream and the Result are two views of one run.
func TestStreamRequestsAgreesWithTheResult(t *testing.T) {
	// 250 requests a second of 10 ms onto 2 single-worker pods (ρ = 1.25): the queues
	// grow and requests time out at 1 s, so both outcomes are streamed.
	e := build(t, opts{duration: "10s", seed: 3, replicas: 2,
		pod:    "      concurrency: 1\n      serviceTime: {distribution: constant, value: 10ms}",
		client: "    rate: 250/s\n    timeout: 1s\n    library: curl-loop"})
	ok, byKind, byPod := int64(0), map[string]int64{}, map[string]int64{}
	seen := map[uint64]bool{}
	e.StreamRequests(func(r *result.Request) {
		if seen[r.Seq] {
			t.Fatalf("request %d streamed twice", r.Seq)
		}
		seen[r.Seq] = true
		if r.Seq >= uint64(e.Requests()) || r.LatencyNS <= 0 || r.Client != "caller" || r.Service != "web" || r.Method != "GET" {
			t.Fatalf("request %+v", *r)
		}
		switch {
		case r.Error == "" && r.Code == 200:
			ok++
			byPod[r.Pod]++
		case r.Error != "" && r.Code == 0:
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
