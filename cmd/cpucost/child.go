package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"trafficlab/emulate/load"
	"trafficlab/scenario"
)

// body is what the server answers: 13 bytes.
const body = "hello, world\n"

// warmPath is where clients send their warm-up requests: the server leaves them out of
// its counts.
const warmPath = "/warm"

// child runs one of the hidden subcommands this binary re-executes itself with.
func child(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("no subcommand")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	var run func() error
	switch args[0] {
	case "serve":
		delay := fs.Duration("delay", 0, "answer after this long")
		run = func() error { return serve(*delay) }
	case "relay":
		backend := fs.String("backend", "", "host:port to relay to")
		run = func() error { return relayDaemon(*backend) }
	case "grpc-serve":
		run = grpcServe
	case "grpc-client":
		addr := fs.String("addr", "", "host:port of the gRPC server")
		n := fs.Int("n", 0, "calls")
		reuse := fs.Bool("reuse", true, "one ClientConn for every call")
		run = func() error { return grpcClient(*addr, *n, *reuse) }
	case "go":
		url := fs.String("url", "", "target")
		n := fs.Int("n", 0, "requests")
		keepAlive := fs.Bool("keepalive", true, "reuse connections")
		run = func() error { return goClient(*url, *n, *keepAlive) }
	case "load":
		url := fs.String("url", "", "target")
		n := fs.Int("n", 0, "requests")
		keepAlive := fs.Bool("keepalive", true, "reuse connections")
		think := fs.Duration("think", 0, "think time after each answer")
		run = func() error { return loadClient(*url, *n, *keepAlive, *think) }
	case "vegeta":
		url := fs.String("url", "", "target")
		rate := fs.Int("rate", 0, "requests per second")
		dur := fs.Duration("dur", 0, "attack duration")
		timeout := fs.Duration("timeout", 0, "vegeta -timeout")
		out := fs.String("out", os.TempDir(), "directory for the results file")
		run = func() error { return vegetaClient(*url, *rate, *dur, *timeout, *out) }
	default:
		return fmt.Errorf("unknown subcommand %q", args[0])
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	return run()
}

// serve is the server every case talks to: each request gets body (after delay),
// /close gets it with Connection: close, and /bulk?bytes=N gets N bytes. It prints its address, then, for each line on stdin, its
// counts as JSON (srvStats); it exits when stdin closes.
func serve(delay time.Duration) error {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return err
	}
	var conns, reqs atomic.Int64
	type firstKey struct{}
	chunk := make([]byte, 64<<10)
	srv := &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		// A connection counts when its first request is a measured one, so that a
		// client's warm-up connections are left out.
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
			return context.WithValue(ctx, firstKey{}, new(atomic.Bool))
		},
		// The timeout regime writes answers to connections the client has closed.
		ErrorLog: log.New(io.Discard, "", 0),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			served := r.Context().Value(firstKey{}).(*atomic.Bool).Swap(true)
			if r.URL.Path != warmPath {
				reqs.Add(1)
				if !served {
					conns.Add(1)
				}
			}
			if r.URL.Path == closePath {
				// The answer ends its connection: a client that keeps connections
				// alive opens one per request (Node's fetch cannot send Connection:
				// close itself).
				w.Header().Set("Connection", "close")
			}
			if r.URL.Path == "/bulk" {
				n, _ := strconv.ParseInt(r.URL.Query().Get("bytes"), 10, 64)
				w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
				for ; n > 0; n -= int64(len(chunk)) {
					if _, err := w.Write(chunk[:min(n, int64(len(chunk)))]); err != nil {
						return
					}
				}
				return
			}
			if delay > 0 {
				time.Sleep(delay)
			}
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			io.WriteString(w, body)
		}),
	}
	go srv.Serve(ln)
	defer srv.Close()
	fmt.Println(ln.Addr())
	return answerStats(func(string) any { return srvStats{conns.Load(), reqs.Load()} })
}

// answerStats prints stats(line) as a JSON line for each line on stdin, until stdin
// closes.
func answerStats(stats func(line string) any) error {
	sc := bufio.NewScanner(os.Stdin)
	enc := json.NewEncoder(os.Stdout)
	for sc.Scan() {
		if err := enc.Encode(stats(sc.Text())); err != nil {
			return err
		}
	}
	return sc.Err()
}

// goClient is Go's net/http client: one http.Client on a clone of DefaultTransport
// (Go's defaults: keep-alive, 2 idle connections per host), n sequential GETs, each
// body read to the end and closed so that the connection goes back to the pool
// (net/http Response.Body documentation). With keepAlive false, DisableKeepAlives:
// each request says "Connection: close" (transport.go persistConn.roundTrip) and no
// connection goes back to the pool (Transport.tryPutIdleConn), so each request dials.
func goClient(url string, n int, keepAlive bool) error {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableKeepAlives = !keepAlive
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	get := func(u string) bool {
		resp, err := c.Get(u)
		if err != nil {
			return false
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return err == nil && resp.StatusCode == http.StatusOK
	}
	for range warmup {
		get(url + warmPath[1:])
	}
	return json.NewEncoder(os.Stdout).Encode(measure(n, func() bool { return get(url) }))
}

// warmup is how many requests a Go client sends before its measured loop: the
// connection pool, the allocator and the page cache settle.
const warmup = 50

// measure calls req (which reports success) up to n times, for at most loopLimit, and
// returns what it did with the CPU this process spent meanwhile.
func measure(n int, req func() bool) loopResult {
	var res loopResult
	u0, t0 := selfUsage(), time.Now()
	for res.N < n && time.Since(t0) < loopLimit {
		res.N++
		if !req() {
			res.Failed++
		}
	}
	res.spent(u0, t0)
	return res
}

// spent records the CPU and wall time since u0 and t0.
func (r *loopResult) spent(u0 usage, t0 time.Time) {
	u := selfUsage()
	r.WallNs = time.Since(t0).Nanoseconds()
	cpu := u.cpu() - u0.cpu()
	r.CPUNs = cpu.Nanoseconds()
	if cpu > 0 {
		r.SysShare = float64(u.sys-u0.sys) / float64(cpu)
	}
}

// loadClient is emulate's own load generator (emulate/load, its HTTP/1.1 client), the
// client every emulated client pod runs whatever its library: one thread, n requests,
// on one kept connection or a new one each.
func loadClient(url string, n int, keepAlive bool, think time.Duration) error {
	reuse := scenario.ReuseShared
	if !keepAlive {
		reuse = scenario.ReuseNone
	}
	cfg := func(target string, n int) load.Config {
		c := load.Config{Target: target, Duration: loopLimit, Seed: 1, Name: "cpucost", Timeout: 5 * time.Second,
			Phases: []load.Phase{{Threads: 1, Requests: int64(n)}},
			Conn:   load.Connections{Reuse: reuse, Protocol: scenario.ProtocolHTTP1}}
		if think > 0 {
			c.ThinkTime = &scenario.Distribution{Distribution: scenario.DistConstant, Value: metav1.Duration{Duration: think}}
		}
		return c
	}
	if _, err := load.Run(context.Background(), cfg(url+warmPath[1:], warmup)); err != nil {
		return err
	}
	var res loopResult
	u0, t0 := selfUsage(), time.Now()
	rep, err := load.Run(context.Background(), cfg(url, n))
	if err != nil {
		return err
	}
	res.spent(u0, t0)
	res.N, res.Failed = int(rep.Requests.Total+rep.Requests.InFlight), int(rep.Requests.Failed+rep.Requests.InFlight)
	return json.NewEncoder(os.Stdout).Encode(res)
}
