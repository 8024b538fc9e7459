package load_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"trafficlab/emulate/load"
	"trafficlab/scenario"
)

// pods is a test server standing for several pods behind a Service: each
// connection it accepts is given the next pod, round robin, and every answer on it
// names that pod, as kube-proxy pins a connection to the pod it picked.
type pods struct {
	*httptest.Server
	accepted atomic.Int64 // connections
	open     atomic.Int64
	peak     atomic.Int64
}

type podKey struct{}

// newPods starts a server of n pods; handle (optional) runs before the answer and
// may write it; setup (optional) configures the server before it starts.
func newPods(t *testing.T, n int, h2c bool, handle func(w http.ResponseWriter, r *http.Request) bool, setup ...func(*http.Server)) *pods {
	t.Helper()
	p := &pods{}
	p.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(load.PodHeader, r.Context().Value(podKey{}).(string))
		if handle != nil && handle(w, r) {
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	p.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		i := p.accepted.Add(1) - 1
		return context.WithValue(ctx, podKey{}, fmt.Sprintf("web-%d", int(i)%n))
	}
	p.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			n := p.open.Add(1)
			for m := p.peak.Load(); n > m && !p.peak.CompareAndSwap(m, n); m = p.peak.Load() {
			}
		case http.StateClosed, http.StateHijacked:
			p.open.Add(-1)
		}
	}
	if h2c {
		p.Config.Protocols = new(http.Protocols)
		p.Config.Protocols.SetHTTP1(true)
		p.Config.Protocols.SetUnencryptedHTTP2(true)
	}
	for _, f := range setup {
		f(p.Config)
	}
	p.Start()
	t.Cleanup(p.Close)
	return p
}

// cfg is a small closed-loop configuration against target.
func cfg(target string, threads int, run time.Duration, reuse string) load.Config {
	return load.Config{
		Target: target + "/", Duration: run, Timeout: 2 * time.Second, Seed: 1, Name: "test",
		Phases: []load.Phase{{Threads: threads}},
		Conn:   load.Connections{Reuse: reuse, Protocol: scenario.ProtocolHTTP1},
	}
}

func run(t *testing.T, c load.Config) *load.Report {
	t.Helper()
	rep, err := load.Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// clients runs f against both HTTP clients.
func clients(t *testing.T, f func(t *testing.T, client string)) {
	for _, c := range []string{load.ClientTrafficlab, load.ClientNetHTTP} {
		t.Run(strings.ReplaceAll(c, "/", "-"), func(t *testing.T) { f(t, c) })
	}
}

func TestReuse(t *testing.T) {
	clients(t, func(t *testing.T, client string) {
		for _, tc := range []struct {
			name       string
			reuse      string
			threads    int
			maxPerHost int
			maxReq     int64
			// want: connections opened (-1: one per request) and the most open at once.
			opened, peak int64
		}{
			// Bounded by a request count, so the run ends with nothing in flight to cut off.
			{"none opens one per request", scenario.ReuseNone, 3, 0, 60, -1, 3},
			{"per-thread opens one per thread", scenario.ReusePerThread, 4, 0, 400, 4, 4},
			{"shared with maxPerHost 2 never exceeds 2", scenario.ReuseShared, 6, 2, 400, 2, 2},
		} {
			t.Run(tc.name, func(t *testing.T) {
				srv := newPods(t, 3, false, func(http.ResponseWriter, *http.Request) bool {
					time.Sleep(200 * time.Microsecond) // keeps every thread's request in flight together
					return false
				})
				c := cfg(srv.URL, tc.threads, 5*time.Second, tc.reuse)
				c.HTTPClient, c.Conn.MaxPerHost, c.MaxRequests = client, tc.maxPerHost, tc.maxReq
				rep := run(t, c)
				if rep.Requests.OK != tc.maxReq || rep.Requests.Failed != 0 {
					t.Fatalf("requests %+v errors %+v other %v", rep.Requests, rep.Errors, rep.OtherErrors)
				}
				want := tc.opened
				if want < 0 {
					want = rep.Requests.OK
				}
				if rep.Connections.Opened != want || srv.accepted.Load() != want {
					t.Errorf("opened %d connections, server accepted %d; want %d", rep.Connections.Opened, srv.accepted.Load(), want)
				}
				// The server notices a connection the client closed a little later: its
				// count says nothing when every request has its own.
				if rep.Connections.OpenAtEnd != 0 {
					t.Errorf("%d connections left open", rep.Connections.OpenAtEnd)
				}
				if rep.Connections.PeakOpen > tc.peak || (tc.reuse != scenario.ReuseNone && srv.peak.Load() > tc.peak) {
					t.Errorf("peak open %d, at the server %d; want at most %d", rep.Connections.PeakOpen, srv.peak.Load(), tc.peak)
				}
				if tc.reuse == scenario.ReuseNone && rep.PodsReached != 3 {
					t.Errorf("a new connection per request reached %d pods, want all 3", rep.PodsReached)
				}
			})
		}
	})
}

// TestReportsItsCPU: the process's CPU over the run is in the report: more than
// a microsecond a request (a loopback request and its answer cost tens), and no
// more than every core for the run's wall time, which no process can exceed.
func TestReportsItsCPU(t *testing.T) {
	srv := newPods(t, 1, false, nil)
	c := cfg(srv.URL, 2, 5*time.Second, scenario.ReusePerThread)
	c.MaxRequests = 2000
	start := time.Now()
	rep := run(t, c)
	wall := time.Since(start).Seconds()
	if rep.Requests.OK != 2000 || rep.CPUS < 2000e-6 || rep.CPUS > wall*float64(runtime.GOMAXPROCS(0)) {
		t.Errorf("%d answered, CPU %g s in %g s of wall time: want 2000, more than 2 ms, at most %d cores' worth", rep.Requests.OK, rep.CPUS, wall, runtime.GOMAXPROCS(0))
	}
}

// TestPinning: a reused connection stays on the pod it reached first, so the pod
// counts show one pod per connection.
func TestPinning(t *testing.T) {
	clients(t, func(t *testing.T, client string) {
		for _, tc := range []struct {
			name    string
			reuse   string
			threads int
			pods    int // pods reached, each by one connection
		}{
			{"one thread, one connection, one pod", scenario.ReuseShared, 1, 1},
			{"three threads, a connection each, three pods", scenario.ReusePerThread, 3, 3},
		} {
			t.Run(tc.name, func(t *testing.T) {
				srv := newPods(t, 5, false, nil)
				c := cfg(srv.URL, tc.threads, 300*time.Millisecond, tc.reuse)
				c.HTTPClient = client
				rep := run(t, c)
				if rep.PodsReached != tc.pods || rep.Connections.Unpinned != 0 {
					t.Fatalf("pods %+v, unpinned %d; want %d pods", rep.Pods, rep.Connections.Unpinned, tc.pods)
				}
				var sum int64
				for _, p := range rep.Pods {
					sum += p.Requests
					if p.Connections != 1 {
						t.Errorf("pod %s: %d connections, want 1", p.Name, p.Connections)
					}
				}
				if sum != rep.Requests.OK || rep.NoPodHeader != 0 {
					t.Errorf("pods answered %d of %d (%d without the header)", sum, rep.Requests.OK, rep.NoPodHeader)
				}
			})
		}
	})
}

func TestOpenLoopRate(t *testing.T) {
	srv := newPods(t, 2, false, nil)
	for _, tc := range []struct {
		arrival   string
		want, tol int64
	}{
		// Poisson: 400 expected, σ = √400 = 20; ±4σ.
		{scenario.ArrivalPoisson, 400, 80},
		// Constant: the k-th at k/rate, 0 ≤ k < 400; a busy machine may cut the
		// last few off at the deadline.
		{scenario.ArrivalConstant, 400, 5},
	} {
		t.Run(tc.arrival, func(t *testing.T) {
			c := cfg(srv.URL, 0, 2*time.Second, scenario.ReuseShared)
			c.Phases = []load.Phase{{Rate: 200}}
			c.Arrival = tc.arrival
			rep := run(t, c)
			sent := rep.Requests.Total + rep.Requests.InFlight
			if sent < tc.want-tc.tol || sent > tc.want+tc.tol || rep.Requests.NotSent != 0 {
				t.Errorf("sent %d (%+v), want %d ± %d", sent, rep.Requests, tc.want, tc.tol)
			}
		})
	}
}

// TestCoordinatedOmission: requests queue behind one connection while the server
// stalls 300 ms. Latency counted from each request's intended start shows every
// one of them delayed; counted from when each got its connection, only the stalled
// one would be.
func TestCoordinatedOmission(t *testing.T) {
	clients(t, func(t *testing.T, client string) {
		var stalled atomic.Bool
		start := time.Now()
		srv := newPods(t, 1, false, func(http.ResponseWriter, *http.Request) bool {
			if time.Since(start) > 500*time.Millisecond && stalled.CompareAndSwap(false, true) {
				time.Sleep(300 * time.Millisecond)
			}
			return false
		})
		c := cfg(srv.URL, 0, 1500*time.Millisecond, scenario.ReuseShared)
		c.HTTPClient = client
		c.Phases = []load.Phase{{Rate: 100}}
		c.Conn.MaxPerHost = 1
		rep := run(t, c)
		if !stalled.Load() || rep.Requests.Failed != 0 {
			t.Fatalf("stalled %v, requests %+v", stalled.Load(), rep.Requests)
		}
		// About 30 requests arrive during the stall; those of its first 200 ms wait
		// at least 100 ms.
		slow := int64(0)
		for _, b := range rep.Latency.Distribution() {
			if b.From >= int64(100*time.Millisecond) {
				slow += b.Count
			}
		}
		if slow < 15 || rep.Latency.Max() < int64(290*time.Millisecond) {
			t.Errorf("%d requests over 100 ms, max %v; want ≥ 15 and ≥ 290 ms", slow, time.Duration(rep.Latency.Max()))
		}
	})
}

// TestNotSent: an open loop whose slots are all busy counts arrivals as not sent
// instead of delaying them.
func TestNotSent(t *testing.T) {
	srv := newPods(t, 1, false, func(http.ResponseWriter, *http.Request) bool {
		time.Sleep(50 * time.Millisecond)
		return false
	})
	c := cfg(srv.URL, 0, time.Second, scenario.ReuseShared)
	c.Phases = []load.Phase{{Rate: 200}}
	c.MaxInFlight = 1
	rep := run(t, c)
	sent := rep.Requests.Total + rep.Requests.InFlight
	// 200 arrivals, the last at 995 ms; the one due at 1 s, the run's end, is not
	// the run's.
	if sent < 10 || sent > 22 || sent+rep.Requests.NotSent != 200 {
		t.Errorf("sent %d, not sent %d; want about 20 of 200 sent", sent, rep.Requests.NotSent)
	}
}

// rawServer accepts connections and hands each to serve.
func rawServer(t *testing.T, serve func(c *net.TCPConn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				serve(c.(*net.TCPConn))
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// readRequest reads one request's head.
func readRequest(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	br := bufio.NewReader(c)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return false
		}
		if line == "\r\n" {
			return true
		}
	}
}

// closedPort is the URL of a port nothing listens on.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	return "http://" + ln.Addr().String()
}

// onePod is the URL of a pod that answers with handle.
func onePod(t *testing.T, handle func(w http.ResponseWriter, r *http.Request) bool) string {
	return newPods(t, 1, false, handle).URL
}

// errorCases are targets that fail each request one way, and how the Report
// counts it: by a kind, or among the other errors by a key's prefix.
var errorCases = []struct {
	name   string
	target func(t *testing.T) string
	want   func(r *load.Report) int64
	other  string // expected other_errors key, by prefix
}{
	{"connection_refused: nothing listens", closedPort, func(r *load.Report) int64 { return r.Errors.ConnectionRefused }, ""},
	{"connection_reset: SO_LINGER 0 then close", func(t *testing.T) string {
		return rawServer(t, func(c *net.TCPConn) {
			if readRequest(c) {
				_ = c.SetLinger(0)
			}
		})
	}, func(r *load.Report) int64 { return r.Errors.ConnectionReset }, ""},
	{"connection_closed: closed after reading the request", func(t *testing.T) string {
		return rawServer(t, func(c *net.TCPConn) { readRequest(c) })
	}, func(r *load.Report) int64 { return r.Errors.ConnectionClosed }, ""},
	{"timeout: slower than the client's timeout", func(t *testing.T) string {
		return onePod(t, func(_ http.ResponseWriter, r *http.Request) bool {
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
			return false
		})
	}, func(r *load.Report) int64 { return r.Errors.Timeout }, ""},
	{"http_503", func(t *testing.T) string {
		return onePod(t, func(w http.ResponseWriter, _ *http.Request) bool {
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		})
	}, func(r *load.Report) int64 { return r.Errors.HTTP503 }, ""},
	{"other: an error status", func(t *testing.T) string {
		return onePod(t, func(w http.ResponseWriter, _ *http.Request) bool {
			w.WriteHeader(http.StatusInternalServerError)
			return true
		})
	}, nil, "http_500"},
	{"other: not HTTP", func(t *testing.T) string {
		return rawServer(t, func(c *net.TCPConn) {
			if readRequest(c) {
				_, _ = c.Write([]byte("HELLO\r\n\r\n"))
			}
		})
	}, nil, "malformed HTTP response"},
}

func TestErrors(t *testing.T) {
	clients(t, func(t *testing.T, client string) {
		for _, tc := range errorCases {
			t.Run(tc.name, func(t *testing.T) {
				c := cfg(tc.target(t), 1, 5*time.Second, scenario.ReuseShared)
				c.HTTPClient, c.MaxRequests, c.Timeout = client, 4, 100*time.Millisecond
				rep := run(t, c)
				if rep.Requests.Total != 4 || rep.Requests.Failed != 4 {
					t.Fatalf("requests %+v, want 4 failed", rep.Requests)
				}
				if tc.want != nil {
					if got := tc.want(rep); got != 4 || len(rep.OtherErrors) > 0 {
						t.Errorf("errors %+v, other %v; want 4 of this kind", rep.Errors, rep.OtherErrors)
					}
					return
				}
				var n int64
				for k, v := range rep.OtherErrors {
					if strings.Contains(k, tc.other) {
						n += v
					}
				}
				if n != 4 || rep.Errors.Total() != 0 {
					t.Errorf("errors %+v, other %v; want 4 other %q", rep.Errors, rep.OtherErrors, tc.other)
				}
			})
		}
	})
}

// TestMaxLifetime: connections older than the max lifetime are replaced, and no
// request fails for it.
func TestMaxLifetime(t *testing.T) {
	for _, tc := range []struct {
		client, protocol string
	}{
		{load.ClientTrafficlab, scenario.ProtocolHTTP1},
		{load.ClientNetHTTP, scenario.ProtocolHTTP1},
		{load.ClientNetHTTP, scenario.ProtocolHTTP2},
	} {
		t.Run(strings.ReplaceAll(tc.client+" "+tc.protocol, "/", "-"), func(t *testing.T) {
			srv := newPods(t, 3, tc.protocol == scenario.ProtocolHTTP2, nil)
			c := cfg(srv.URL, 2, 650*time.Millisecond, scenario.ReuseShared)
			c.HTTPClient, c.Conn.Protocol, c.Conn.MaxLifetime = tc.client, tc.protocol, 100*time.Millisecond
			c.ThinkTime = &scenario.Distribution{Distribution: scenario.DistConstant, Value: metav1Duration(10 * time.Millisecond)}
			rep := run(t, c)
			if rep.Requests.Failed != 0 || rep.Requests.OK < 50 {
				t.Fatalf("requests %+v errors %+v other %v", rep.Requests, rep.Errors, rep.OtherErrors)
			}
			// 650 ms of connections that live 100 ms: about 6 generations.
			per := int64(2)
			if tc.protocol == scenario.ProtocolHTTP2 {
				per = 1 // one multiplexed connection per generation
			}
			if rep.Connections.Retired < 4 || rep.Connections.Opened < 4*per || rep.Connections.Opened > 8*per {
				t.Errorf("connections %+v: want about %d opened, at least 4 retired", rep.Connections, 6*per)
			}
			if rep.PodsReached < 2 {
				t.Errorf("replaced connections reached %d pods, want a new pick each time", rep.PodsReached)
			}
		})
	}
}

// TestHTTP2: a shared HTTP/2 pool multiplexes every thread on one connection.
func TestHTTP2(t *testing.T) {
	srv := newPods(t, 3, true, func(w http.ResponseWriter, r *http.Request) bool {
		if r.ProtoMajor != 2 {
			w.WriteHeader(http.StatusHTTPVersionNotSupported)
			return true
		}
		time.Sleep(time.Millisecond)
		return false
	})
	c := cfg(srv.URL, 8, 300*time.Millisecond, scenario.ReuseShared)
	c.Conn.Protocol = scenario.ProtocolHTTP2
	rep := run(t, c)
	if rep.Requests.Failed != 0 || rep.Requests.OK < 100 {
		t.Fatalf("requests %+v other %v", rep.Requests, rep.OtherErrors)
	}
	if rep.Connections.Opened != 1 || srv.accepted.Load() != 1 || rep.PodsReached != 1 {
		t.Errorf("%d connections (server: %d), %d pods; want 1 and 1", rep.Connections.Opened, srv.accepted.Load(), rep.PodsReached)
	}
}

// TestIdleClosedByServer: a connection the server closed while it sat idle is
// noticed before reuse and replaced, without an error.
func TestIdleClosedByServer(t *testing.T) {
	clients(t, func(t *testing.T, client string) {
		srv := newPods(t, 1, false, nil, func(s *http.Server) { s.IdleTimeout = 5 * time.Millisecond })
		c := cfg(srv.URL, 1, 400*time.Millisecond, scenario.ReuseShared)
		c.HTTPClient = client
		c.ThinkTime = &scenario.Distribution{Distribution: scenario.DistConstant, Value: metav1Duration(30 * time.Millisecond)}
		rep := run(t, c)
		if rep.Requests.Failed != 0 || rep.Connections.Opened < rep.Requests.OK-1 {
			t.Errorf("requests %+v, %d connections; want no errors and a new connection for each", rep.Requests, rep.Connections.Opened)
		}
	})
}

func TestPhases(t *testing.T) {
	srv := newPods(t, 2, false, nil)
	c := cfg(srv.URL, 0, 5*time.Second, scenario.ReuseShared)
	c.Phases = []load.Phase{
		{Threads: 2, Requests: 10, Pause: 50 * time.Millisecond},
		{Rate: 500, Requests: 20},
	}
	c.Repeat = 2
	rep := run(t, c)
	if rep.Requests.OK != 60 || rep.EndReason != "phases" || rep.DurationS > 1 {
		t.Errorf("%d answered, ended by %s after %.2fs; want 60 by phases, at once", rep.Requests.OK, rep.EndReason, rep.DurationS)
	}
}

func TestBounds(t *testing.T) {
	srv := newPods(t, 1, false, nil)
	t.Run("max requests", func(t *testing.T) {
		c := cfg(srv.URL, 4, 10*time.Second, scenario.ReuseShared)
		c.MaxRequests = 100
		rep := run(t, c)
		if rep.Requests.Total != 100 || rep.EndReason != "max_requests" {
			t.Errorf("requests %+v ended by %s; want 100 by max_requests", rep.Requests, rep.EndReason)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		began := time.Now()
		rep, err := load.Run(ctx, cfg(srv.URL, 2, 10*time.Second, scenario.ReuseShared))
		if err != nil || rep.EndReason != "canceled" || time.Since(began) > time.Second {
			t.Errorf("err %v, ended by %v after %v; want canceled at once", err, rep.EndReason, time.Since(began))
		}
	})
	t.Run("duration abandons what is in flight", func(t *testing.T) {
		clients(t, func(t *testing.T, client string) {
			slow := newPods(t, 1, false, func(_ http.ResponseWriter, r *http.Request) bool {
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
				return false
			})
			began := time.Now()
			c := cfg(slow.URL, 3, 200*time.Millisecond, scenario.ReuseShared)
			c.HTTPClient = client
			rep := run(t, c)
			if rep.Requests.InFlight != 3 || rep.Requests.Total != 0 || rep.Connections.OpenAtEnd != 0 || time.Since(began) > time.Second {
				t.Errorf("requests %+v, %d open at the end, after %v; want 3 in flight, cut off at 200 ms",
					rep.Requests, rep.Connections.OpenAtEnd, time.Since(began))
			}
		})
	})
}

func TestTimeline(t *testing.T) {
	srv := newPods(t, 2, false, nil)
	c := cfg(srv.URL, 2, 2500*time.Millisecond, scenario.ReuseNone)
	c.ThinkTime = &scenario.Distribution{Distribution: scenario.DistConstant, Value: metav1Duration(5 * time.Millisecond)}
	rep := run(t, c)
	if len(rep.Timeline) != 3 {
		t.Fatalf("%d points, want 3", len(rep.Timeline))
	}
	var sum int64
	for i, p := range rep.Timeline {
		sum += p.Requests
		if p.TS != float64(i) || p.Requests == 0 || p.P99MS <= 0 || len(p.PodRequests) != 2 {
			t.Errorf("point %d: %+v", i, p)
		}
	}
	if sum != rep.Requests.Total {
		t.Errorf("timeline sums to %d, total %d", sum, rep.Requests.Total)
	}
}

// TestStartAndIntervals: a run waits for its start time, and hands each interval's
// histogram over in order, holding what the timeline's percentiles came from.
func TestStartAndIntervals(t *testing.T) {
	srv := newPods(t, 1, false, nil)
	c := cfg(srv.URL, 1, 2500*time.Millisecond, scenario.ReusePerThread)
	c.Start = time.Now().Add(300 * time.Millisecond)
	var secs []int64
	var counts []int64
	c.OnInterval = func(sec int64, h *hdr.Histogram) {
		secs = append(secs, sec)
		counts = append(counts, h.TotalCount())
	}
	rep := run(t, c)
	if first := rep.Timeline[0]; time.Since(c.Start) < 2500*time.Millisecond || first.Requests == 0 {
		t.Errorf("the run did not wait for its start: %v since it, first point %+v", time.Since(c.Start), first)
	}
	if !slices.Equal(secs, []int64{0, 1, 2}) {
		t.Fatalf("intervals handed over: %v, want [0 1 2]", secs)
	}
	for i, p := range rep.Timeline {
		if counts[i] != p.Requests-p.Errors {
			t.Errorf("interval %d: histogram holds %d, the point %d answers", i, counts[i], p.Requests-p.Errors)
		}
	}
}

// TestAbortsRun: ab ends its run at the first refused connection; each repeat of
// the phase starts again.
func TestAbortsRun(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	c := cfg("http://"+ln.Addr().String(), 2, 5*time.Second, scenario.ReuseNone)
	c.Phases[0].Duration = time.Second
	c.Repeat, c.AbortsRun = 3, true
	began := time.Now()
	rep := run(t, c)
	if rep.RunsAborted != 3 || rep.Requests.Failed > 6 || time.Since(began) > time.Second {
		t.Errorf("%d runs aborted, requests %+v, after %v; want 3 aborted at once", rep.RunsAborted, rep.Requests, time.Since(began))
	}
}

func TestConfigErrors(t *testing.T) {
	ok := cfg("http://127.0.0.1:1", 1, time.Second, scenario.ReuseShared)
	for _, tc := range []struct {
		name string
		edit func(c *load.Config)
		want string
	}{
		{"https", func(c *load.Config) { c.Target = "https://example.com/" }, "http://"},
		{"no duration", func(c *load.Config) { c.Duration = 0 }, "duration"},
		{"no timeout", func(c *load.Config) { c.Timeout = 0 }, "timeout"},
		{"no load", func(c *load.Config) { c.Phases = nil }, "threads or a rate"},
		{"threads and rate", func(c *load.Config) { c.Phases[0].Rate = 10 }, "either threads or a rate"},
		{"reuse", func(c *load.Config) { c.Conn.Reuse = "sometimes" }, "reuse"},
		{"protocol", func(c *load.Config) { c.Conn.Protocol = "http3" }, "protocol"},
		{"h2 on the trafficlab client", func(c *load.Config) {
			c.Conn.Protocol, c.HTTPClient = scenario.ProtocolHTTP2, load.ClientTrafficlab
		}, "HTTP/1.1"},
		{"ramp without duration", func(c *load.Config) { c.Phases = []load.Phase{{Rate: 1, RampTo: 2}} }, "ramp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			c.Phases = append([]load.Phase(nil), ok.Phases...)
			tc.edit(&c)
			if _, err := load.Run(context.Background(), c); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one about %q", err, tc.want)
			}
		})
	}
}

// With a slow threshold, every answer slower than it is counted in the report, by
// pod and by interval alike: pod web-1 answers after 50 ms, over a 25 ms threshold,
// so each of its answers is slow; without a threshold none is counted.
func TestSlowCounts(t *testing.T) {
	srv := newPods(t, 2, false, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Context().Value(podKey{}) == "web-1" {
			time.Sleep(50 * time.Millisecond)
		}
		return false
	})
	for _, threshold := range []time.Duration{25 * time.Millisecond, 0} {
		c := cfg(srv.URL, 2, 1500*time.Millisecond, scenario.ReuseNone)
		c.SlowThreshold = threshold
		rep := run(t, c)
		var byPod, byInterval, slowPod int64
		for _, p := range rep.Pods {
			byPod += p.Slow
			if p.Name == "web-1" {
				slowPod = p.Requests - p.Errors
				if p.Slow != slowPod && threshold > 0 {
					t.Errorf("web-1: %d slow of %d answers; want every one", p.Slow, slowPod)
				}
			}
		}
		for _, pt := range rep.Timeline {
			byInterval += pt.Slow
		}
		switch {
		case threshold == 0 && (rep.Slow != 0 || byPod != 0 || byInterval != 0):
			t.Errorf("no threshold: %d slow, %d by pod, %d by interval; want none counted", rep.Slow, byPod, byInterval)
		case threshold > 0 && (rep.Slow < slowPod || slowPod == 0 || byPod != rep.Slow || byInterval != rep.Slow):
			t.Errorf("%d slow, %d by pod, %d by interval, web-1 answered %d: want web-1's at least, the same count each way", rep.Slow, byPod, byInterval, slowPod)
		}
	}
}
