package simulate

import (
	"testing"

	"trafficlab/result"
)

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

// An app that closes idle connections after 5 s (Node's server.keepAliveTimeout)
// and 20 client pods of one thread each that come back after 4.998 to 5.002 s,
// with 0.1 ms between pods: about one reuse in twenty sends its request while the
// app's FIN is on its way (0.2 ms of the 4 ms spread), into a closed socket; some
// 24 of 480 requests. Each request races with chance 1/20, so the count is
// binomial, sd 4.8: within four of it, 5 to 43.
//   - Node's http.Agent keeps idle sockets 5 s too, reuses them, and passes the
//     reset to the caller: errors.
//   - Go keeps them 90 s, and resends the request on a new connection: no error.
//   - undici closes its own idle sockets after 4 s, before the app does: no race.
//   - Without the app's idle timeout, nothing closes: no error, nothing resent.
func TestAppIdleTimeoutRacesClientReuse(t *testing.T) {
	for _, c := range []struct {
		name, lib, pod string
		errors, resent bool
	}{
		{"node http.Agent", "node-http-agent", "      idleTimeout: 5s", true, false},
		{"go net/http", "go-net-http", "      idleTimeout: 5s", false, true},
		{"undici", "node-undici", "      idleTimeout: 5s", false, false},
		{"node http.Agent, no app timeout", "node-http-agent", "", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			pod := "      serviceTime: {distribution: constant, value: 1ms}\n" + c.pod
			r := run(t, opts{replicas: 3, duration: "120s", pod: pod,
				client: "    replicas: 20\n    threads: 1\n    library: " + c.lib + "\n    thinkTime: {distribution: uniform, min: 4998ms, max: 5002ms}"})
			t.Logf("%d answered, errors %+v, resent %d, %d connections", r.Requests.OK, r.Errors, r.Requests.Retried, r.Clients[0].ConnectionsOpened)
			raced := func(n int64, want bool) bool { return want && n >= 5 && n <= 43 || !want && n == 0 }
			if resets := r.Errors.Of(result.ErrorConnectionReset); !raced(resets, c.errors) || r.Errors.Total() != resets {
				t.Errorf("errors %+v; want resets: %v (5 to 43), nothing else", r.Errors, c.errors)
			}
			if !raced(r.Requests.Retried, c.resent) {
				t.Errorf("%d resent; want some: %v (5 to 43)", r.Requests.Retried, c.resent)
			}
			// Every reset and resend here is one the app's idle close caused.
			if got, want := r.Services[0].IdleCloseResets, r.Errors.Total()+r.Requests.Retried; got != want {
				t.Errorf("%d requests counted as reaching an idle-closed connection, %d reset or resent", got, want)
			}
		})
	}
}
