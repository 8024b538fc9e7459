package serve

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"trafficlab/scenario"
)

// testPod parses a pod spec or fails the test.
func testPod(t *testing.T, spec string) *scenario.Pod {
	t.Helper()
	p, diags := ParsePod("test", []byte(spec))
	if p == nil {
		t.Fatalf("pod spec: %v", diags)
	}
	return p
}

// started is a server running on a loopback port.
type started struct {
	*Server
	addr string
	done chan error // Serve's result
}

// start serves cfg on 127.0.0.1 until the test ends; cleanup exits the process and
// waits for Serve, so no handler outlives the test.
func start(t *testing.T, cfg Config) *started {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "web-0"
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	st := &started{Server: s, addr: ln.Addr().String(), done: make(chan error, 1)}
	go func() { st.done <- s.Serve(ln) }()
	t.Cleanup(func() {
		s.cut()
		if err := st.wait(5 * time.Second); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return st
}

// wait returns Serve's result, failing if it takes longer than d.
func (st *started) wait(d time.Duration) error {
	select {
	case err := <-st.done:
		st.done <- err // for the next wait, such as cleanup's
		return err
	case <-time.After(d):
		return fmt.Errorf("Serve did not return within %v", d)
	}
}

// client speaks HTTP/1.1 or, with h2c, HTTP/2 with prior knowledge.
func client(t *testing.T, h2c bool) *http.Client {
	tr := &http.Transport{}
	var p http.Protocols
	if h2c {
		p.SetUnencryptedHTTP2(true)
	} else {
		p.SetHTTP1(true)
	}
	tr.Protocols = &p
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// get sends GET path and reads the answer.
func get(c *http.Client, addr, path string) (*http.Response, []byte, error) {
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

var protocols = []struct {
	name  string
	h2c   bool
	major int
}{{"http1.1", false, 1}, {"h2c", true, 2}}

// One port speaks both protocols; every answer names the pod and has the body that
// makes the answer responseBytes long.
func TestProtocols(t *testing.T) {
	st := start(t, Config{Pod: testPod(t, "serviceTime: {distribution: constant, value: 1ms}\nresponseBytes: 16Ki"), Name: "web-3"})
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			c := client(t, p.h2c)
			for _, path := range []string{"/", "/some/path?q=1"} {
				resp, body, err := get(c, st.addr, path)
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != 200 || resp.ProtoMajor != p.major {
					t.Errorf("%s: %s %s, want 200 over HTTP/%d", path, resp.Proto, resp.Status, p.major)
				}
				if got := resp.Header.Get(PodHeader); got != "web-3" {
					t.Errorf("%s: %s = %q, want web-3", path, PodHeader, got)
				}
				// 16384 bytes minus the HTTP/1.1 status line and headers, which the
				// raw test below counts exactly; HTTP/2 sends the same body.
				if len(body) < 16384-200 || len(body) >= 16384 {
					t.Errorf("%s: body %d bytes, want 16384 less the headers", path, len(body))
				}
			}
			resp, _, err := get(c, st.addr, ReadyPath)
			if err != nil || resp.StatusCode != 200 || resp.Header.Get(PodHeader) != "web-3" {
				t.Errorf("readiness: %v %v", resp, err)
			}
		})
	}
}

// On HTTP/1.1 the whole answer, status line and headers included, is responseBytes
// long (scenario/types.go Pod.ResponseBytes), or only the headers when they are longer.
func TestResponseBytesHTTP1(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		want  int
		extra string // request header
	}{
		{"responseBytes: 200", 200, ""},
		{"", 200, ""}, // the scenario's default
		{"responseBytes: 16Ki", 16384, ""},
		{"responseBytes: 1Mi", 1 << 20, ""},
		{"responseBytes: 1000", 1000, "X-Padding: yes\r\n"},
		{"responseBytes: 10", 0, ""}, // headers alone: at least 10
	} {
		t.Run(tc.spec, func(t *testing.T) {
			st := start(t, Config{Pod: testPod(t, "serviceTime: {distribution: constant, value: 1ms}\n"+tc.spec)})
			c, err := net.Dial("tcp", st.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n%sConnection: close\r\n\r\n", tc.extra)
			raw, err := io.ReadAll(c)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("answer %q: %v", raw, err)
			}
			if tc.want > 0 && len(raw) != tc.want {
				t.Errorf("answer is %d bytes, want %d:\n%s", len(raw), tc.want, raw[:min(len(raw), 300)])
			}
			if tc.want == 0 && resp.ContentLength != 0 {
				t.Errorf("body %d bytes, want 0 when the headers exceed responseBytes", resp.ContentLength)
			}
		})
	}
}

func TestBodySize(t *testing.T) {
	const line = len("Content-Length: \r\n")
	for total := 0; total < 20000; total++ {
		header := 100
		b := bodySize(total, header)
		size := header + line + len(fmt.Sprint(b)) + b
		switch {
		case total < header+line+1:
			if b != 0 {
				t.Fatalf("total %d: body %d, want 0", total, b)
			}
		case size > total || size < total-1:
			// At a power of ten the exact size may be impossible (Content-Length
			// gains a digit as the body loses one byte): one byte short then.
			t.Fatalf("total %d: body %d makes %d bytes", total, b, size)
		}
	}
}

// cpuTime is the process's CPU time so far, user and system, all threads.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A burnt service time costs the process at least that much CPU, and as much wall
// time as the thread needs to get that much of a core; a slept one costs next to no
// CPU; the off-CPU wait adds wall time only.
//
// Tolerances: a burn ends at the first clock read past the service time, about a
// microsecond late, so the CPU floor is exact; the ceiling allows 2 ms per request
// for the test's own client and server (measured: 0.3–0.9 ms with an idle machine,
// up to twice that with every core busy, from thread hand-offs) plus 5 ms for the Go
// runtime (GC, timers). Wall time can only exceed one thread's CPU time.
// Its ceiling is what a reference burn of the same length and a reference wait on a
// Go timer, as serve waits, take in the test itself just before each request, plus
// 5 ms for loopback and wake-ups: on an idle core they take the service and wait
// times, and on a machine busy with other work they stretch as the server's do (a
// busy machine fired the 20 ms wait's timer 3.5 ms late).
func TestWork(t *testing.T) {
	const n = 5
	const slack = 5 * time.Millisecond
	ms := func(x time.Duration) time.Duration { return x * time.Millisecond }
	for _, tc := range []struct {
		name, spec string
		work       string
		burnt      time.Duration    // CPU per request
		cpu        [2]time.Duration // total for n requests
		wall       time.Duration    // floor of each request
	}{
		{"burn", "serviceTime: {distribution: constant, value: 20ms}", Burn, ms(20), [2]time.Duration{n * ms(20), n*ms(22) + slack}, ms(20)},
		{"sleep", "serviceTime: {distribution: constant, value: 20ms}", Sleep, 0, [2]time.Duration{0, n*ms(2) + slack}, ms(20)},
		{"burn+wait", "serviceTime: {distribution: constant, value: 10ms}\nwaitTime: {distribution: constant, value: 20ms}", Burn, ms(10), [2]time.Duration{n * ms(10), n*ms(12) + slack}, ms(30)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := start(t, Config{Pod: testPod(t, tc.spec), Work: tc.work})
			c := client(t, false)
			if _, _, err := get(c, st.addr, "/"); err != nil { // dial and warm up first
				t.Fatal(err)
			}
			var cpu time.Duration
			var walls []time.Duration
			ref, refWait := time.Duration(1<<62), time.Duration(1<<62)
			for range n {
				r0 := time.Now()
				burn(tc.burnt, nil)
				ref = min(ref, time.Since(r0))
				r0 = time.Now()
				sleep(tc.wall-tc.burnt, nil)
				refWait = min(refWait, time.Since(r0))
				cpu0, t0 := cpuTime(t), time.Now()
				if _, _, err := get(c, st.addr, "/"); err != nil {
					t.Fatal(err)
				}
				walls = append(walls, time.Since(t0))
				cpu += cpuTime(t) - cpu0
			}
			slices.Sort(walls)
			ceiling := ref + refWait + slack
			t.Logf("%d requests: process CPU %v; wall fastest %v, slowest %v; reference burn of %v took %v, reference wait of %v %v", n, cpu, walls[0], walls[n-1], tc.burnt, ref, tc.wall-tc.burnt, refWait)
			if cpu < tc.cpu[0] || cpu > tc.cpu[1] {
				t.Errorf("process CPU %v for %d requests, want [%v, %v]", cpu, n, tc.cpu[0], tc.cpu[1])
			}
			if walls[0] < tc.wall || walls[0] > ceiling {
				t.Errorf("fastest request took %v, want [%v, %v]", walls[0], tc.wall, ceiling)
			}
		})
	}
}

// With concurrency 1, two simultaneous 50 ms requests are served one after the other:
// the second waits for the worker (simulate/server.go appArrive, finish). Unbounded,
// both are served at once. Timers never fire early, so each finish time is at least
// its floor; 30 ms above it allows for loopback and scheduling.
func TestConcurrency(t *testing.T) {
	const service = 50 * time.Millisecond
	for _, tc := range []struct {
		name        string
		concurrency int
		h2c         bool
		want        [2]time.Duration
	}{
		{"1 worker http1.1", 1, false, [2]time.Duration{service, 2 * service}},
		{"1 worker h2c", 1, true, [2]time.Duration{service, 2 * service}},
		{"2 workers http1.1", 2, false, [2]time.Duration{service, service}},
		{"unbounded h2c", 0, true, [2]time.Duration{service, service}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := fmt.Sprintf("serviceTime: {distribution: constant, value: 50ms}\nconcurrency: %d", tc.concurrency)
			st := start(t, Config{Pod: testPod(t, spec), Work: Sleep})
			c := client(t, tc.h2c)
			if _, _, err := get(c, st.addr, ReadyPath); err != nil { // h2c: one connection, already up
				t.Fatal(err)
			}
			t0 := time.Now()
			var wg sync.WaitGroup
			var mu sync.Mutex
			var done []time.Duration
			for range 2 {
				wg.Go(func() {
					if _, _, err := get(c, st.addr, "/"); err != nil {
						t.Error(err)
					}
					mu.Lock()
					done = append(done, time.Since(t0))
					mu.Unlock()
				})
			}
			wg.Wait()
			slices.Sort(done)
			t.Logf("finished at %v", done)
			for i, want := range tc.want {
				if i < len(done) && (done[i] < want || done[i] > want+30*time.Millisecond) {
					t.Errorf("request %d finished at %v, want [%v, %v]", i+1, done[i], want, want+30*time.Millisecond)
				}
			}
		})
	}
}

// A connection's first request pays the accept cost (simulate/server.go start).
func TestAcceptCost(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			st := start(t, Config{Pod: testPod(t, "serviceTime: {distribution: constant, value: 1ms}\nacceptCost: 40ms"), Work: Sleep})
			c := client(t, p.h2c)
			var took []time.Duration
			for range 2 {
				t0 := time.Now()
				if _, _, err := get(c, st.addr, "/"); err != nil {
					t.Fatal(err)
				}
				took = append(took, time.Since(t0))
			}
			if took[0] < 41*time.Millisecond || took[1] > 30*time.Millisecond {
				t.Errorf("first request %v, second %v: want the first ≥ 41ms and the second well under 41ms", took[0], took[1])
			}
		})
	}
}

// pod.idleTimeout: the app closes a keep-alive connection no request came on for
// that long, and keeps one that is used sooner.
func TestIdleTimeout(t *testing.T) {
	st := start(t, Config{Pod: testPod(t, "serviceTime: {distribution: constant, value: 1ms}\nidleTimeout: 500ms"), Work: Sleep})
	c, err := net.Dial("tcp", st.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	ask := func() error {
		if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
			return err
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	for i := range 3 { // 100 ms apart: kept
		if err := ask(); err != nil {
			t.Fatalf("request %d on a connection used 100 ms before: %v", i, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Idle past 500 ms: the app has closed it, and the read sees its FIN.
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := br.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("read %d bytes, %v, on a connection idle past the timeout; want EOF", n, err)
	}
}

// inService waits until n requests hold a worker and m wait for one.
func (st *started) inService(t *testing.T, n, m int) {
	t.Helper()
	waitFor(t, func() bool { b, w := st.workers.load(); return b == n && w == m })
}

func readiness(s *Server) int {
	rec := httptest.NewRecorder()
	s.handle(rec, httptest.NewRequest("GET", ReadyPath, nil))
	return rec.Code
}

type answer struct {
	resp *http.Response
	body []byte
	err  error
}

// send sends GET / in the background on a client of its own (a connection of its own
// on HTTP/1.1).
func send(t *testing.T, addr string, h2c bool) <-chan answer {
	out := make(chan answer, 1)
	c := client(t, h2c)
	go func() {
		resp, body, err := get(c, addr, "/")
		out <- answer{resp, body, err}
	}()
	return out
}

func recv(t *testing.T, ch <-chan answer) answer {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no answer within 10s")
		return answer{}
	}
}

// Drain: not ready at once, no new connections, the request in service and the one
// queued behind it both answered (HTTP/1.1 with Connection: close), then the process
// exits (simulate/lifecycle.go onSigterm, drained).
func TestTerminateDrain(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			st := start(t, Config{Pod: testPod(t, "serviceTime: {distribution: constant, value: 150ms}\nconcurrency: 1\nonSigterm: {action: drain}"), Work: Sleep})
			waitFor(t, func() bool { return readiness(st.Server) == 200 }) // once Serve runs
			first := send(t, st.addr, p.h2c)
			st.inService(t, 1, 0)
			second := send(t, st.addr, p.h2c)
			st.inService(t, 1, 1)
			t0 := time.Now()
			st.Terminate()
			if got := readiness(st.Server); got != 503 {
				t.Errorf("readiness %d after SIGTERM, want 503", got)
			}
			if c, err := net.DialTimeout("tcp", st.addr, time.Second); err == nil {
				c.Close()
				t.Errorf("a new connection was accepted while draining")
			}
			for i, ch := range []<-chan answer{first, second} {
				r := recv(t, ch)
				if r.err != nil {
					t.Fatalf("request %d: %v", i+1, r.err)
				}
				if r.resp.StatusCode != 200 || r.resp.ProtoMajor != p.major {
					t.Errorf("request %d: %s %s", i+1, r.resp.Proto, r.resp.Status)
				}
				if p.major == 1 && !r.resp.Close {
					t.Errorf("request %d: answered without Connection: close", i+1)
				}
			}
			// The last answer leaves about 150 ms after SIGTERM; Shutdown notices the
			// idle connections within its poll interval (≤ 500 ms by then).
			if err := st.wait(2 * time.Second); err != nil {
				t.Fatal(err)
			}
			t.Logf("exited %v after SIGTERM", time.Since(t0))
		})
	}
}

// Exit: the process ends at once. The request in service reads EOF (a FIN); the one
// still waiting for a worker gets a reset (simulate/lifecycle.go exit).
func TestTerminateExit(t *testing.T) {
	st := start(t, Config{Pod: testPod(t, "serviceTime: {distribution: constant, value: 5s}\nconcurrency: 1\nonSigterm: {action: exit}"), Work: Sleep})
	first := send(t, st.addr, false)
	st.inService(t, 1, 0)
	second := send(t, st.addr, false)
	st.inService(t, 1, 1)
	t0 := time.Now()
	st.Terminate()
	if got := readiness(st.Server); got != 503 {
		t.Errorf("readiness %d after SIGTERM, want 503", got)
	}
	if err := st.wait(time.Second); err != nil {
		t.Fatal(err)
	}
	r1, r2 := recv(t, first), recv(t, second)
	t.Logf("exit after %v; in service: %v; queued: %v", time.Since(t0), r1.err, r2.err)
	if r1.err == nil || errors.Is(r1.err, syscall.ECONNRESET) {
		t.Errorf("request in service: %v, want EOF (the kernel's FIN)", r1.err)
	}
	if !errors.Is(r2.err, syscall.ECONNRESET) {
		t.Errorf("queued request: %v, want connection reset", r2.err)
	}
}

// Exit cuts HTTP/2 streams too.
func TestTerminateExitH2C(t *testing.T) {
	st := start(t, Config{Pod: testPod(t, "serviceTime: {distribution: constant, value: 5s}"), Work: Sleep})
	first := send(t, st.addr, true)
	st.inService(t, 1, 0)
	st.Terminate()
	if err := st.wait(time.Second); err != nil {
		t.Fatal(err)
	}
	if r := recv(t, first); r.err == nil {
		t.Errorf("in-flight HTTP/2 request answered %s after exit", r.resp.Status)
	}
}

// A drain that outlasts the app's drainTimeout is cut as an exit would be.
func TestDrainTimeout(t *testing.T) {
	st := start(t, Config{Pod: testPod(t, "serviceTime: {distribution: constant, value: 5s}\nonSigterm: {action: drain, drainTimeout: 100ms}"), Work: Sleep})
	first := send(t, st.addr, false)
	st.inService(t, 1, 0)
	t0 := time.Now()
	st.Terminate()
	if err := st.wait(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(t0); took < 100*time.Millisecond {
		t.Errorf("exited %v after SIGTERM, before the 100ms drain timeout", took)
	}
	if r := recv(t, first); r.err == nil {
		t.Errorf("request answered %s after the drain timeout", r.resp.Status)
	}
}

func TestDrainLimit(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want time.Duration
	}{
		{"", 30 * time.Second}, // terminationGracePeriodSeconds defaults to 30
		{"terminationGracePeriodSeconds: 60", 60 * time.Second},
		{"lifecycle: {preStop: {sleep: {seconds: 10}}}", 20 * time.Second},
		{"lifecycle: {preStop: {exec: {command: [sh, -c, sleep 5]}}}", 25 * time.Second},
		{"terminationGracePeriodSeconds: 10\nlifecycle: {preStop: {sleep: {seconds: 10}}}", 2 * time.Second},
		{"terminationGracePeriodSeconds: 0", 2 * time.Second},
		{"onSigterm: {action: drain, drainTimeout: 5s}", 5 * time.Second},
		{"terminationGracePeriodSeconds: 3\nonSigterm: {action: drain, drainTimeout: 5s}", 3 * time.Second},
	} {
		p := testPod(t, "serviceTime: {distribution: constant, value: 1ms}\n"+tc.spec)
		if got := drainLimit(p); got != tc.want {
			t.Errorf("%q: drain limit %v, want %v", tc.spec, got, tc.want)
		}
	}
}

// Ready only after ReadyAfter; alive all along.
func TestReadyAfter(t *testing.T) {
	st := start(t, Config{Pod: testPod(t, "serviceTime: {distribution: constant, value: 1ms}"), ReadyAfter: 300 * time.Millisecond})
	c := client(t, false)
	for _, tc := range []struct {
		path string
		want int
	}{{ReadyPath, 503}, {LivePath, 200}, {"/", 200}} {
		resp, _, err := get(c, st.addr, tc.path)
		if err != nil || resp.StatusCode != tc.want {
			t.Errorf("%s: %v %v, want %d", tc.path, resp, err, tc.want)
		}
	}
	waitFor(t, func() bool {
		resp, _, err := get(c, st.addr, ReadyPath)
		return err == nil && resp.StatusCode == 200
	})
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// One access-log line of accessLog.bytes per request: at once, or when the app's
// buffer is written out (here at exit).
func TestAccessLog(t *testing.T) {
	for _, tc := range []struct {
		spec          string
		before, after int // bytes written before and after the exit
	}{
		{"accessLog: {bytes: 100}", 300, 300},
		{"accessLog: {bytes: 100, sync: false, bufferBytes: 1Ki}", 0, 300},
		{"", 0, 0},
	} {
		var out syncBuffer
		st := start(t, Config{Pod: testPod(t, "serviceTime: {distribution: constant, value: 1ms}\n"+tc.spec), AccessLog: &out})
		c := client(t, false)
		for range 3 {
			if _, _, err := get(c, st.addr, "/"); err != nil {
				t.Fatal(err)
			}
		}
		before := len(out.String())
		st.Terminate()
		if err := st.wait(time.Second); err != nil {
			t.Fatal(err)
		}
		after := out.String()
		if before != tc.before || len(after) != tc.after || strings.Count(after, "\n") != tc.after/100 {
			t.Errorf("%q: %d bytes logged before exit and %d after (%q), want %d and %d in lines of 100", tc.spec, before, len(after), after, tc.before, tc.after)
		}
	}
}

func TestNewErrors(t *testing.T) {
	p := testPod(t, "serviceTime: {distribution: constant, value: 1ms}")
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Name: "a"}, "no pod spec"},
		{Config{Pod: &scenario.Pod{}, Name: "a"}, "lacks its defaults"},
		{Config{Pod: p}, "no pod name"},
		{Config{Pod: p, Name: "a", Work: "spin"}, `work "spin"`},
		{Config{Pod: p, Name: "a", ReadyAfter: -1}, "negative"},
	} {
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v): %v, want an error with %q", tc.cfg, err, tc.want)
		}
	}
}

// Terminate before Serve: Serve returns at once.
func TestTerminateBeforeServe(t *testing.T) {
	s, err := New(Config{Pod: testPod(t, "serviceTime: {distribution: constant, value: 1ms}"), Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	s.Terminate()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("Serve did not return")
	}
}
