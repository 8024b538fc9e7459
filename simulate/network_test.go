package simulate

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// The segment model on a lossless, constant-latency link adds exactly the round trips
// the fast path schedules: a link override that repeats the cluster's latency turns the
// segment model on and must change nothing.
func TestLosslessSegmentsMatchTheFastPath(t *testing.T) {
	for _, reuse := range []string{"none", "shared"} {
		t.Run(reuse, func(t *testing.T) {
			o := opts{duration: "2s", replicas: 3,
				pod:    "      serviceTime: {distribution: constant, value: 1ms}",
				client: "    threads: 2\n    connections: {reuse: " + reuse + "}"}
			fast := build(t, o)
			o.network = "links: [{target: {service: web}, link: {latency: 100us}}]"
			slow := build(t, o)
			if fast.net != nil || slow.net == nil {
				t.Fatalf("fast path %v, segments %v: the override should turn segments on", fast.net == nil, slow.net != nil)
			}
			fast.Run(nil)
			slow.Run(nil)
			a, b := fast.Result(), slow.Result()
			if a.Requests.OK != b.Requests.OK || a.LatencyMS != b.LatencyMS {
				t.Errorf("fast path %d requests %+v; segments %d requests %+v", a.Requests.OK, a.LatencyMS, b.Requests.OK, b.LatencyMS)
			}
			if b.TCP.Retransmits != 0 {
				t.Errorf("%d retransmits on a lossless link", b.TCP.Retransmits)
			}
		})
	}
}

// R4's mechanism: at 1,000 requests a second over a link with 10 ms delay and 3 %
// loss, HTTP/2 between two Envoys puts every request on one connection, so each loss
// stalls all streams behind it and cuts the one window they share (a single
// connection cannot carry the load: Mathis' bound, MSS/RTT × 1.22/√p, is about 690
// segments a second here for Reno, less for CUBIC); HTTP/1.1 keeps each loss to the request on that
// connection. HTTP/2's p99 is worse on every seed.
func TestHTTP2TailWorseThanHTTP1UnderLoss(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		p99 := map[string]float64{}
		for _, proto := range []string{"http1", "http2"} {
			r := runExample(t, "r4-http2-vs-http1-loss.yaml", "spec.duration=20s", fmt.Sprintf("spec.seed=%d", seed),
				"spec.clients[0].sidecar.upstreamProtocol="+proto).Result()
			if r.TCP == nil || r.TCP.Retransmits == 0 {
				t.Fatalf("seed %d %s: no retransmissions under 3%% loss", seed, proto)
			}
			p99[proto] = r.LatencyMS.P99
		}
		if p99["http2"] <= p99["http1"] {
			t.Errorf("seed %d: p99 http2 %.1f ms not above http1 %.1f ms", seed, p99["http2"], p99["http1"])
		}
	}
}

// Without loss every configuration of R4 is within a millisecond: the sidecars add
// their worker time and loopback hops, HTTP/2 adds nothing.
func TestR4WithoutLossAllAlike(t *testing.T) {
	var p99s []float64
	for _, sets := range [][]string{
		{"spec.clients[0].sidecar=null", "spec.services[0].sidecar=null"},
		{"spec.services[0].sidecar=null", "spec.clients[0].sidecar.upstreamProtocol=http1"},
		{"spec.clients[0].sidecar.upstreamProtocol=http1"},
		nil,
	} {
		r := runExample(t, "r4-http2-vs-http1-loss.yaml", append(sets, "spec.duration=10s", "spec.cluster.network.links[0].link.loss=0%")...).Result()
		p99s = append(p99s, r.LatencyMS.P99)
	}
	if spread := slices.Max(p99s) - slices.Min(p99s); spread > 1 {
		t.Errorf("p99 by configuration %v ms: spread %.2f ms, want within 1 ms", p99s, spread)
	}
}

// A loss fault only hurts while it lasts: with a new connection per request, every
// request sent after it ends takes the lossless time, while some sent during it
// waited for a retransmission timeout (at least 200 ms).
func TestLossFaultWindow(t *testing.T) {
	r := run(t, opts{duration: "30s", replicas: 2,
		pod:    "      serviceTime: {distribution: constant, value: 1ms}",
		client: "    rate: 200/s\n    connections: {reuse: none}",
		faults: "  faults: [{kind: loss, start: 10s, end: 20s, target: {service: web}, direction: both, loss: \"20%\"}]\n" +
			"  report: {samples: 100000}"})
	if r.TCP == nil || r.TCP.Retransmits == 0 || int64(len(r.Samples)) != r.Requests.Total {
		t.Fatalf("tcp %+v, %d samples of %d requests: want retransmissions and every request sampled", r.TCP, len(r.Samples), r.Requests.Total)
	}
	slowDuring := 0
	for _, s := range r.Samples {
		switch {
		case s.TS < 10 || s.TS >= 20:
			// 1.5 round trips of 0.2 ms, 1 ms of work, one trip back.
			if math.Abs(s.LatencyMS-1.4) > 0.001 {
				t.Fatalf("request sent at %.3fs outside the fault took %.3f ms, want 1.4", s.TS, s.LatencyMS)
			}
		case s.LatencyMS >= 200:
			slowDuring++
		}
	}
	if slowDuring == 0 {
		t.Error("no request sent during a 20% loss fault waited for an RTO")
	}
}

// A partition drops every packet: requests time out while it lasts, none after.
func TestPartitionTimesOut(t *testing.T) {
	r := run(t, opts{duration: "20s", replicas: 1,
		pod:    "      serviceTime: {distribution: constant, value: 1ms}",
		client: "    rate: 100/s\n    timeout: 1s\n    connections: {reuse: none}",
		faults: "  faults: [{kind: partition, start: 5s, end: 10s, target: {service: web}, direction: both}]"})
	// Requests sent in [5 s, 10 s) never arrive; the ones sent in the last second before
	// the end also cannot finish their handshake before it (1 s timeout).
	if r.Errors.Timeout < 450 || r.Errors.Timeout > 600 {
		t.Errorf("%d timeouts, want about 500 (5 s of 100/s)", r.Errors.Timeout)
	}
	for _, p := range r.Timeline {
		if p.TS >= 12 && p.Errors > 0 {
			t.Errorf("t=%gs: %d errors after the partition healed", p.TS, p.Errors)
		}
	}
}

// pod-kill deletes the pod at once, without preStop or SIGTERM, and the ReplicaSet
// replaces it.
func TestPodKillFault(t *testing.T) {
	r := run(t, opts{duration: "10s", replicas: 2,
		pod:    "      serviceTime: {distribution: constant, value: 1ms}",
		client: "    threads: 2\n    connections: {reuse: none}",
		faults: "  faults: [{kind: pod-kill, start: 3s, target: {pod: web-0}}]"})
	names := map[string]bool{}
	for _, p := range r.Pods {
		names[p.Name] = true
		if p.Name == "web-0" && (p.EndS == nil || math.Abs(*p.EndS-3) > 1e-9) {
			t.Errorf("web-0 ended at %v, want 3 s", deref(p.EndS))
		}
	}
	if !names["web-2"] {
		t.Errorf("pods %v: no replacement web-2", names)
	}
}

// A Gilbert-Elliott link reaches the TCP model: a burst model with netem's defaults
// and a mean loss of 1/26 ≈ 3.8 % makes retransmissions (the network package's
// TestPathsFollowTheScenario checks the path carries the four parameters).
func TestGilbertElliottLink(t *testing.T) {
	e := build(t, opts{duration: "5s", replicas: 1, network: "gilbertElliott: {p: 1%, r: 25%}",
		pod:    "      serviceTime: {distribution: constant, value: 100us}",
		client: "    rate: 500/s\n    library: go-net-http"})
	e.Run(nil)
	if r := e.Result(); r.TCP == nil || r.TCP.Retransmits == 0 {
		t.Fatalf("tcp %+v: want retransmissions over a bursty link", r.TCP)
	}
}

// HTTP/2 flow control: a 1 MiB answer through a 64 KiB window (the stream's or the
// connection's) goes in 16 chunks, each sent only once the previous one's
// WINDOW_UPDATE is back: at least 15 round trips of 20 ms after the first, 300 ms.
// With Go's default windows (4 MiB, 1 GiB) only TCP paces it: the first answer takes
// slow start's 7 round trips (10 segments doubling to 725), later ones about one.
func TestHTTP2WindowsPaceLargeAnswers(t *testing.T) {
	cases := []struct {
		connections string
		slow        bool
	}{
		{"{protocol: http2, http2: {streamWindowBytes: 64Ki}}", true},
		{"{protocol: http2, http2: {connectionWindowBytes: 64Ki}}", true},
		{"{protocol: http2}", false},
	}
	for _, tc := range cases {
		r := run(t, opts{duration: "3s", replicas: 1,
			network: "links: [{target: {service: web}, link: {latency: 10ms}}]",
			pod:     "      serviceTime: {distribution: constant, value: 100us}\n      responseBytes: 1Mi",
			client:  "    threads: 1\n    library: go-net-http\n    connections: " + tc.connections})
		switch {
		case r.Requests.OK == 0:
			t.Errorf("%s: no answer", tc.connections)
		case tc.slow && r.LatencyMS.Min < 300:
			t.Errorf("%s: fastest answer %.1f ms, want at least 300 (15 window round trips)", tc.connections, r.LatencyMS.Min)
		case !tc.slow && r.LatencyMS.Max >= 300:
			t.Errorf("%s: slowest answer %.1f ms, want under 300 (slow start only)", tc.connections, r.LatencyMS.Max)
		}
	}
}

// HTTP/2 flow control keeps each direction's credit to itself: a request's last
// WINDOW_UPDATE that comes back after its answer has started returns connection
// credit only. A 64 KiB answer through a 4 KiB stream window then takes its 16 chunks
// one round trip (0.2 ms) apart, at least 3 ms, and the pod sees each request once.
func TestHTTP2CreditStaysInItsDirection(t *testing.T) {
	r := run(t, opts{duration: "5s", replicas: 1,
		pod: "      serviceTime: {distribution: constant, value: 50us}\n      responseBytes: 64Ki",
		client: "    threads: 1\n    library: go-net-http\n    request: {method: POST, bodyBytes: 8Ki}\n" +
			"    connections: {protocol: http2, http2: {streamWindowBytes: 4Ki}}"})
	if r.LatencyMS.P50 < 3 {
		t.Errorf("p50 %.3f ms, want at least 3 (15 window round trips of 0.2 ms)", r.LatencyMS.P50)
	}
	if got := r.Pods[0].Requests; got > r.Requests.OK+r.Requests.InFlight {
		t.Errorf("the pod served %d requests for %d answered and %d in flight: some arrived twice", got, r.Requests.OK, r.Requests.InFlight)
	}
}

// Streams waiting for flow-control credit go down with their connection: when the
// pod is killed, requests whose bodies wait for the server's 4 KiB window are reset
// at once, as the sent ones are, instead of waiting for the client's 3 s timeout.
// The pod's packets take 20 ms, so a stream spends most of its time waiting for the
// WINDOW_UPDATE of its last chunk, with nothing of it in TCP.
func TestHTTP2WaitingStreamsFailWithTheirConnection(t *testing.T) {
	r := run(t, opts{duration: "10s", replicas: 1, network: "links: [{target: {service: web}, direction: to, link: {latency: 20ms}}]",
		pod: "      serviceTime: {distribution: constant, value: 1ms}\n      http2: {streamWindowBytes: 4Ki}",
		client: "    threads: 8\n    timeout: 3s\n    library: go-net-http\n    request: {method: POST, bodyBytes: 32Ki}\n" +
			"    connections: {protocol: http2}",
		faults: "  faults: [{kind: pod-kill, start: 2s, target: {pod: web-0}}]"})
	if r.Errors.Timeout != 0 || r.Errors.Total() == 0 {
		t.Errorf("errors %+v: want the killed pod's requests reset, none timed out", r.Errors)
	}
}

// A client's timeout resets its HTTP/2 stream (RST_STREAM): the server drops the
// answer, so abandoned answers neither hold the connection's credit ahead of live
// ones nor keep it busy after the load stops. Ten seconds of requests with a 100 ms
// timeout over 4 KiB windows and 2 % loss leave nothing in flight 20 s after the last
// one (a retransmission chain that long would need seven losses in a row).
func TestHTTP2TimeoutResetsTheStream(t *testing.T) {
	e := build(t, opts{duration: "30s", replicas: 1, network: `loss: "2%"`,
		pod: "      serviceTime: {distribution: constant, value: 100us}\n      responseBytes: 64Ki\n" +
			"      http2: {streamWindowBytes: 4Ki, connectionWindowBytes: 4Ki}",
		client: "    phases: [{duration: 10s, rate: 50/s}]\n    timeout: 100ms\n    library: go-net-http\n" +
			"    connections: {protocol: http2, http2: {streamWindowBytes: 4Ki, connectionWindowBytes: 4Ki}}"})
	e.Run(nil)
	r := e.Result()
	if r.Errors.Timeout == 0 || r.Requests.OK == 0 {
		t.Fatalf("ok %d, errors %+v: want both answers and timeouts", r.Requests.OK, r.Errors)
	}
	live := 0
	for _, j := range e.jobs {
		if j.state != jobFree {
			live++
		}
	}
	if live != 0 {
		t.Errorf("%d jobs still in use 20 s after the load stopped: reset streams kept sending", live)
	}
}
