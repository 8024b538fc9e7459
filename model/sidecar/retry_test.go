package sidecar

import (
	"math"
	"slices"
	"testing"
	"time"

	"trafficlab/sim"
)

func TestParseRetryOn(t *testing.T) {
	cases := []struct {
		in    string
		on    RetryOn
		codes []int
		err   bool
	}{
		{IstioRetryOn, RetryConnectFailure | RetryRefusedStream | RetryGRPCUnavailable | RetryGRPCCancelled | RetryRetriableStatusCodes, nil, false},
		{IstioInboundRetryOn, RetryResetBeforeRequest, nil, false},
		// retry.go parseRetryOn: integers that are HTTP statuses become codes and imply
		// retriable-status-codes; blanks are trimmed and empty items skipped.
		{" 5xx , 503,,gateway-error", Retry5xx | RetryGatewayError | RetryRetriableStatusCodes, []int{503}, false},
		{"retriable-4xx,reset,deadline-exceeded,resource-exhausted,internal", RetryRetriable4xx | RetryReset | RetryGRPCDeadlineExceeded | RetryGRPCResourceExhausted | RetryGRPCInternal, nil, false},
		{"", 0, nil, false},
		{"999", 0, nil, true}, // not an HTTP status: an unknown word
		{"envoy-ratelimited", 0, nil, true},
		{"connect_failure", 0, nil, true},
	}
	for _, c := range cases {
		on, codes, err := ParseRetryOn(c.in)
		if (err != nil) != c.err || (!c.err && (on != c.on || !slices.Equal(codes, c.codes))) {
			t.Errorf("ParseRetryOn(%q) = %b, %v, %v; want %b, %v, error %v", c.in, on, codes, err, c.on, c.codes, c.err)
		}
	}
}

// retry.go DefaultPolicy / cachedDefaultInboundPolicy.
func TestIstioPolicies(t *testing.T) {
	out := IstioOutboundRetryPolicy()
	if out.NumRetries != 2 || !out.AvoidPreviousHosts || out.HostSelectionRetries != 5 || out.PerTryTimeout != 0 || len(out.RetriableStatusCodes) != 0 {
		t.Errorf("outbound %+v", out)
	}
	in := IstioInboundRetryPolicy()
	if in.NumRetries != 2 || in.RetryOn != RetryResetBeforeRequest || in.AvoidPreviousHosts {
		t.Errorf("inbound %+v", in)
	}
}

// wouldRetryFromHeaders and wouldRetryFromReset (retry_state_impl.cc) for each way an
// attempt can end, under Istio's two default policies and some explicit ones.
func TestRetriable(t *testing.T) {
	policy := func(s string) RetryPolicy {
		on, codes, err := ParseRetryOn(s)
		if err != nil {
			t.Fatal(err)
		}
		return RetryPolicy{NumRetries: 2, RetryOn: on, RetriableStatusCodes: codes}
	}
	outbound, inbound := IstioOutboundRetryPolicy(), IstioInboundRetryPolicy()
	fivexx, gateway, reset := policy("5xx"), policy("gateway-error"), policy("reset")
	codes, conflict := policy("503,429"), policy("retriable-4xx")
	resp := func(s int) Attempt { return Attempt{End: Response, Status: s} }
	grpc := func(code int) Attempt { return Attempt{End: Response, Status: 200, GRPCStatus: code} }
	cases := []struct {
		name  string
		p     *RetryPolicy
		a     Attempt
		retry bool
	}{
		{"istio: connection refused", &outbound, Attempt{End: ConnectFailure}, true},
		{"istio: reset after the request went out", &outbound, Attempt{End: Reset, RequestSent: true}, false},
		{"istio: reset before anything was sent", &outbound, Attempt{End: Reset}, false},
		{"istio: HTTP/2 refused stream", &outbound, Attempt{End: RefusedStream, RequestSent: true}, true},
		{"istio: 503 from upstream is not retried", &outbound, resp(503), false},
		{"istio: 200", &outbound, resp(200), false},
		{"istio: grpc UNAVAILABLE", &outbound, grpc(14), true},
		{"istio: grpc CANCELLED", &outbound, grpc(1), true},
		{"istio: grpc DEADLINE_EXCEEDED", &outbound, grpc(4), false},
		{"istio: per-try timeout", &outbound, Attempt{End: PerTryTimeout, RequestSent: true}, false},
		{"istio: circuit breaker overflow", &outbound, Attempt{End: Overflow}, false},
		{"inbound: reset before the app got a byte", &inbound, Attempt{End: Reset}, true},
		{"inbound: reset after", &inbound, Attempt{End: Reset, RequestSent: true}, false},
		{"inbound: app refused the connection", &inbound, Attempt{End: ConnectFailure, RequestSent: true}, true},
		{"inbound: 503", &inbound, resp(503), false},
		{"5xx: 500", &fivexx, resp(500), true},
		{"5xx: 404", &fivexx, resp(404), false},
		{"5xx: reset counts as a 5xx", &fivexx, Attempt{End: Reset, RequestSent: true}, true},
		{"5xx: per-try timeout", &fivexx, Attempt{End: PerTryTimeout, RequestSent: true}, true},
		{"5xx: overflow never", &fivexx, Attempt{End: Overflow}, false},
		{"gateway-error: 502", &gateway, resp(502), true},
		{"gateway-error: 504", &gateway, resp(504), true},
		{"gateway-error: 500", &gateway, resp(500), false},
		{"reset: refused stream", &reset, Attempt{End: RefusedStream}, true},
		{"reset: overflow never", &reset, Attempt{End: Overflow}, false},
		{"reset: a 503 response is not a reset", &reset, resp(503), false},
		{"codes: 429", &codes, resp(429), true},
		{"codes: 503", &codes, resp(503), true},
		{"codes: 502", &codes, resp(502), false},
		{"retriable-4xx: 409", &conflict, resp(409), true},
		{"retriable-4xx: 429", &conflict, resp(429), false},
	}
	for _, c := range cases {
		if got := c.p.Retriable(c.a); got != c.retry {
			t.Errorf("%s: Retriable = %v, want %v", c.name, got, c.retry)
		}
	}
}

// shouldRetry: not retriable, then the retry count, then the max_retries breaker.
func TestDecide(t *testing.T) {
	p := IstioOutboundRetryPolicy()
	fail, ok := Attempt{End: ConnectFailure}, Attempt{End: Response, Status: 200}
	b := NewBreaker(Thresholds{MaxRetries: 1})
	steps := []struct {
		a    Attempt
		done int
		want RetryStatus
		open uint64
	}{
		{ok, 0, RetryNo, 0},
		{fail, 0, RetryYes, 1},
		{fail, 1, RetryOverflow, 1}, // another request's retry holds the only unit
		{fail, 2, RetryLimitExceeded, 1},
	}
	for i, s := range steps {
		if got := p.Decide(s.a, s.done, b); got != s.want || b.Open(Retries) != s.open {
			t.Errorf("step %d: %d with %d open, want %d with %d", i, got, b.Open(Retries), s.want, s.open)
		}
	}
}

// JitteredExponentialBackOffStrategy::nextBackOffMs: interval base, doubled while below
// max/2, else max; the wait is random() % interval ms.
func TestBackoffIntervals(t *testing.T) {
	ms := sim.Time(time.Millisecond)
	cases := []struct {
		name      string
		base, max sim.Time
		intervals []uint64 // ms, for retries 1, 2, ...
	}{
		{"Envoy/Istio default", 0, 0, []uint64{25, 50, 100, 200, 250, 250, 250}},
		{"explicit 25ms/250ms", 25 * ms, 250 * ms, []uint64{25, 50, 100, 200, 250}},
		{"base above max/2", 40 * ms, 60 * ms, []uint64{40, 60, 60}},
		{"doubling_limit_ is max/2 in whole ms", 25 * ms, 101 * ms, []uint64{25, 50, 101, 101}},
		{"max defaults to 10x base", 100 * ms, 0, []uint64{100, 200, 400, 800, 1000, 1000}},
		{"sub-millisecond base is 1 ms", sim.Time(300 * time.Microsecond), 0, []uint64{1, 2, 4, 8, 10}},
	}
	for _, c := range cases {
		twin, rng := newRNG(17), newRNG(17)
		for i, iv := range c.intervals {
			want := sim.Time(twin.Uint64N(iv)) * ms
			if got := Backoff(i+1, c.base, c.max, rng); got != want {
				t.Errorf("%s retry %d: %v, want %v (interval %d ms)", c.name, i+1, got, want, iv)
			}
		}
	}
}

// The wait of retry n is uniform on {0, …, m−1} ms (m its interval): mean (m−1)/2, variance
// (m²−1)/12. 100,000 draws put the sample mean within 5 standard errors.
func TestBackoffDistribution(t *testing.T) {
	const draws = 100000
	rng := newRNG(23)
	for _, c := range []struct {
		retry int
		m     float64
	}{{1, 25}, {2, 50}, {4, 200}, {6, 250}} {
		retry, m := c.retry, c.m
		sum, maxSeen := 0.0, sim.Time(0)
		for range draws {
			d := Backoff(retry, 0, 0, rng)
			if d%sim.Time(time.Millisecond) != 0 {
				t.Fatalf("retry %d: %v is not whole milliseconds", retry, d)
			}
			sum += d.Seconds() * 1000
			maxSeen = max(maxSeen, d)
		}
		mean, se := sum/draws, math.Sqrt((m*m-1)/12/draws)
		if math.Abs(mean-(m-1)/2) > 5*se {
			t.Errorf("retry %d: mean %.3f ms, want %.1f ± %.3f", retry, mean, (m-1)/2, 5*se)
		}
		if maxSeen != sim.Time(m-1)*sim.Time(time.Millisecond) {
			t.Errorf("retry %d: largest wait %v, want %v ms", retry, maxSeen, m-1)
		}
	}
}
