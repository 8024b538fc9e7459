package simulate

import (
	"strings"
	"testing"
)

const headless = "    clusterIP: None"

// Behind a headless Service each library's own resolution decides the spread:
// what distinguishes each is tested on 5 pods and 4 client pods.
func TestHeadlessSpreadByLibrary(t *testing.T) {
	for _, c := range []struct {
		name, client string
		check        func(t *testing.T, counts []int64, opened int64)
	}{
		// A channel connects to the first address of its shuffled answer and stays.
		{"grpc-go pick_first: one pod per channel", "    library: grpc-go", func(t *testing.T, counts []int64, opened int64) {
			if opened != 4 || reachedPods(counts) > 4 {
				t.Errorf("%d connections reaching %v, want one per client pod", opened, counts)
			}
		}},
		// A connection to each pod, calls in turn: the pods' counts differ only by
		// the calls in flight at the end.
		{"grpc-go round_robin: even", "    library: grpc-go\n    connections: {loadBalancing: round_robin}", func(t *testing.T, counts []int64, opened int64) {
			lo, hi := spread(counts)
			if opened != 20 || hi-lo > 32 {
				t.Errorf("%d connections, counts %v, want 20 and within the 32 calls in flight", opened, counts)
			}
		}},
		// A lookup per new connection, a new order each: a uniform pick per request,
		// multinomial counts; chi-square with 4 degrees of freedom stays under
		// 18.47 but for 1 run in 1,000.
		{"go-net-http, a connection per request: uniform", "    library: go-net-http\n    connections: {reuse: none}", func(t *testing.T, counts []int64, opened int64) {
			if x := chiSquare(counts); x > 18.47 {
				t.Errorf("chi-square %.1f of %v, want under 18.47", x, counts)
			}
		}},
		// Java keeps an answer 30 s: within 9 s every new connection of the client
		// pod goes to its one first address.
		{"okhttp, one client pod, a connection per request: the JVM's 30 s cache pins", "    library: okhttp\n    connections: {reuse: none}", onePod},
		// ab resolves once, and connects to that first address for the run.
		{"ab, one client pod: one pod for the run", "    library: ab", onePod},
		// aiohttp hands each new connection its cached answer rotated by one: per
		// client pod the pods take turns, so counts differ by at most 4 (one per
		// client pod) plus what the 10 s cache renews.
		{"aiohttp, a connection per request: rotates", "    library: python-aiohttp\n    connections: {reuse: none}", func(t *testing.T, counts []int64, opened int64) {
			if lo, hi := spread(counts); hi-lo > 8 {
				t.Errorf("counts %v differ by %d, want at most 8", counts, hi-lo)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			replicas := "4"
			if strings.Contains(c.name, "one client pod") {
				replicas = "1"
			}
			r := run(t, opts{replicas: 5, service: headless, duration: "9s",
				client: "    replicas: " + replicas + "\n    threads: 8\n" + c.client})
			if r.Errors.Total() != 0 {
				t.Errorf("errors %+v, want none", r.Errors)
			}
			counts := podCounts(r)
			t.Logf("%d connections, per pod %v", r.Clients[0].ConnectionsOpened, counts)
			c.check(t, counts, r.Clients[0].ConnectionsOpened)
		})
	}
}

func onePod(t *testing.T, counts []int64, opened int64) {
	if reachedPods(counts) != 1 {
		t.Errorf("counts %v over %d connections, want one pod reached", counts, opened)
	}
}

func reachedPods(counts []int64) int {
	n := 0
	for _, c := range counts {
		if c > 0 {
			n++
		}
	}
	return n
}

func spread(counts []int64) (lo, hi int64) {
	lo, hi = counts[0], counts[0]
	for _, c := range counts {
		lo, hi = min(lo, c), max(hi, c)
	}
	return lo, hi
}

// A round_robin channel connects to the pods of its last answer and resolves again
// only when a connection closes: after a scale-out the new pods get nothing, until
// a server maxConnectionAge closes connections; then every channel reaches them.
// vegeta keeps its first answer for the run, and never does.
func TestHeadlessScaleOut(t *testing.T) {
	for _, c := range []struct {
		name, client, grpc string
		newPodsGet         bool
	}{
		{"grpc-go round_robin", "    library: grpc-go\n    connections: {loadBalancing: round_robin}", "", false},
		{"grpc-go round_robin, maxConnectionAge 30s", "    library: grpc-go\n    connections: {loadBalancing: round_robin}",
			"\n      grpc: {maxConnectionAge: 30s}", true},
		{"vegeta, a connection per request", "    library: vegeta\n    connections: {reuse: none}", "", false},
		{"go-net-http, a connection per request", "    library: go-net-http\n    connections: {reuse: none}", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := build(t, opts{replicas: 2, duration: "150s", service: headless,
				pod:    "      serviceTime: {distribution: exponential, mean: 1ms}" + c.grpc,
				client: "    replicas: 4\n    threads: 4\n    thinkTime: {distribution: constant, value: 10ms}\n" + c.client})
			r := runScaling(e, 60*sec, 6)
			if r.Errors.Total() != 0 {
				t.Errorf("errors %+v, want none", r.Errors)
			}
			reached := 0
			for _, p := range r.Pods {
				if p.StartS > 0 && p.Requests > 0 {
					reached++
				}
			}
			t.Logf("per pod %v", podCounts(r))
			if want := map[bool]int{true: 4}[c.newPodsGet]; reached != want {
				t.Errorf("%d of the 4 new pods got calls, want %d", reached, want)
			}
		})
	}
}

// A headless Service with no ready pod does not resolve: DNS answers NXDOMAIN, and
// every request fails so, a round trip to DNS later, none refused.
func TestHeadlessWithoutReadyPodsIsNoSuchHost(t *testing.T) {
	r := run(t, opts{replicas: 0, service: headless, duration: "1s", client: "    threads: 1\n    library: go-net-http"})
	if r.Errors.NoSuchHost == 0 || r.Errors.NoSuchHost != r.Errors.Total() {
		t.Errorf("errors %+v, want only no such host", r.Errors)
	}
	// One failure per DNS round trip (2 × 100 µs): 5,000 in 1 s.
	if n := r.Errors.NoSuchHost; n < 4900 || n > 5000 {
		t.Errorf("%d failures in 1 s, want one per 200 µs round trip", n)
	}
}

// Which client pod holds which connections is recorded where connections are
// long-lived, and left out where each carries one request.
func TestHeldOnlyForLongLivedConnections(t *testing.T) {
	for _, c := range []struct {
		client string
		held   bool
	}{
		{"    threads: 2\n    library: curl-loop", false},
		{"    threads: 2\n    library: go-net-http", true},
	} {
		r := run(t, opts{replicas: 3, duration: "1s", client: c.client})
		cl := r.Clients[0]
		if got := len(cl.Held) > 0; got != c.held {
			t.Errorf("%q: held %+v for %d requests over %d connections", c.client, cl.Held, cl.Requests, cl.ConnectionsOpened)
		}
		var n int64
		for _, h := range cl.Held {
			for _, k := range h.To {
				n += k
			}
		}
		if c.held && n != cl.ConnectionsOpened {
			t.Errorf("held %+v counts %d connections, the client opened %d", cl.Held, n, cl.ConnectionsOpened)
		}
	}
}
