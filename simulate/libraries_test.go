package simulate

import "testing"

// The pool behaviour that tells each newer library profile apart, in a run.
func TestLibraryPoolsDiffer(t *testing.T) {
	// 20 threads, no think time: every thread always holds a connection, unless
	// the pool caps them.
	busy := func(lib string) string { return "    threads: 20\n    library: " + lib }
	// 20 threads that think 1 ms between requests of 1 ms: connections go idle and
	// come back all the time.
	bursty := func(lib string) string {
		return busy(lib) + "\n    thinkTime: {distribution: exponential, mean: 1ms}"
	}
	for _, c := range []struct {
		name, client          string
		peakAtMost, peakLeast int64
		openedAtMost          int64 // 0: no bound
		openedLeast           int64
	}{
		// Apache HttpClient 5: 5 connections per route, the other requests wait.
		{"apache caps a route at 5", busy("apache-httpclient5"), 5, 5, 5, 5},
		{"go-net-http does not", busy("go-net-http"), 20, 20, 0, 20},
		// OkHttp keeps 5 idle: a burst's other connections close when returned, and
		// the next burst dials again.
		{"okhttp closes all but 5 idle", bursty("okhttp"), 20, 6, 0, 200},
		{"rust-reqwest keeps every one", bursty("rust-reqwest"), 20, 6, 20, 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, opts{replicas: 5, pod: "      serviceTime: {distribution: constant, value: 1ms}", client: c.client})
			cl := r.Clients[0]
			t.Logf("peak %d, opened %d", cl.PeakOpen, cl.ConnectionsOpened)
			if cl.PeakOpen > c.peakAtMost || cl.PeakOpen < c.peakLeast {
				t.Errorf("peak %d open, want %d to %d", cl.PeakOpen, c.peakLeast, c.peakAtMost)
			}
			if cl.ConnectionsOpened < c.openedLeast || c.openedAtMost > 0 && cl.ConnectionsOpened > c.openedAtMost {
				t.Errorf("%d opened, want %d to %d (0: any)", cl.ConnectionsOpened, c.openedLeast, c.openedAtMost)
			}
		})
	}
}

// A draining pod closes its idle connections. Go looks for the close before
// reusing one and dials anew; OkHttp never looks (for a GET), sends on the
// closed connection, and resends after the reset; Apache HttpClient looks only at
// connections idle 2 s or more. None of them shows the caller an error.
func TestUncheckedIdleConnectionsAreResent(t *testing.T) {
	pod := "      serviceTime: {distribution: exponential, mean: 1ms}\n" +
		"      lifecycle: {preStop: {sleep: {seconds: 5}}}\n" +
		"      onSigterm: {action: drain}"
	retried := map[string]int64{}
	for _, lib := range []string{"go-net-http", "okhttp", "apache-httpclient5"} {
		e := build(t, opts{replicas: 3, duration: "15s", pod: pod,
			client: "    threads: 6\n    thinkTime: {distribution: constant, value: 100ms}\n    library: " + lib})
		r := runScaling(e, 5*sec, 1)
		if r.Errors.Total() != 0 {
			t.Errorf("%s: errors %+v, want none", lib, r.Errors)
		}
		retried[lib] = r.Requests.Retried
	}
	t.Logf("resent: %v", retried)
	// Each idle connection to the two drained pods is found closed once: by Go's
	// check, or by a request and its resend. 6 threads hold at most 6.
	if retried["go-net-http"] != 0 || retried["okhttp"] == 0 || retried["apache-httpclient5"] == 0 {
		t.Errorf("requests resent after a reset: %v; want none for Go, some for OkHttp and Apache", retried)
	}
}
