// Package serve is the pod's server process of the emulate engine (`trafficlab serve`):
// a real HTTP server that behaves as the scenario's pod spec says and as the
// simulator models it (simulate/server.go, simulate/lifecycle/).
//
// One TCP listener answers HTTP/1.1 and cleartext HTTP/2 (h2c with prior knowledge).
// Each request takes one of the app's worker threads (Pod.Concurrency, queueing in
// arrival order when all are busy), spends a sampled service time on the CPU (or
// asleep, with Work: Sleep), waits the sampled off-CPU time, writes the access-log
// line if the pod has one, and answers 200 with Pod.ResponseBytes bytes. Every answer
// carries the header X-Trafficlab-Pod naming the pod. Terminate plays SIGTERM:
// the pod's onSigterm action, exit or drain.
package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"trafficlab/model/dist"
	"trafficlab/model/kubelet"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// PodHeader names the pod that answered, on every answer, for the load generator's
// per-pod counts.
const PodHeader = "X-Trafficlab-Pod"

// The probe endpoints. They bypass the worker pool: the simulator's readiness probe
// succeeds while the app listens, however busy (simulate/lifecycle/termination.go onProbe).
const (
	ReadyPath = "/healthz/ready"
	LivePath  = "/healthz/live"
)

// How a request's CPU work (its service time) is spent.
const (
	// Burn keeps a core busy for the service time, measured in the thread's own CPU
	// time, so that a CPU limit (CFS quota) stretches it as in Kubernetes.
	Burn = "burn"
	// Sleep waits the service time out without using a core: for runs where CPU
	// contention is not the point, or the machine is too small to burn for real.
	Sleep = "sleep"
)

// logFlushInterval is how often a buffered access log is written out: zap's
// BufferedWriteSyncer default FlushInterval (zapcore/buffered_write_syncer.go), the
// buffer the scenario's accessLog.sync: false names.
const logFlushInterval = 30 * time.Second

// Config is one pod's server.
type Config struct {
	// Pod is the pod spec, defaulted and validated: from scenario.Load or ParsePod.
	Pod *scenario.Pod
	// Name is the pod's name: it answers in PodHeader and names the pod's random
	// stream, as in the simulator (sim.Stream(seed, "pod/"+name)).
	Name string
	// Seed is the scenario's spec.seed.
	Seed int64
	// Work is Burn (the default when empty) or Sleep.
	Work string
	// ReadyAfter keeps ReadyPath answering 503 for this long after Serve starts: an
	// app that listens before it can serve (caches to warm, connections to open).
	ReadyAfter time.Duration
	// AccessLog receives the access-log lines when the pod spec has accessLog; nil
	// discards them.
	AccessLog io.Writer
	// Service is the pod's service, which its calls' figures name as their caller.
	Service string
	// Calls are the addresses of the Services the pod calls, by name: the URL each
	// call goes to (emulate: the Service's ClusterIP). Every Service the pod spec's
	// calls name needs one.
	Calls map[string]string
	// DNS is the DNS server (IP:PORT) that resolves a called headless Service's
	// name; "" for the system's resolver.
	DNS string
	// GRPC: the pod's clients speak gRPC, which it answers on grpc-go's server
	// (grpc.go), beside HTTP/1.1 for its probes.
	GRPC bool
	// SubtractOverhead burns each request's CPU work less what the process spends on
	// the request beside it (its HTTP stack, the runtime), measured as it runs, so
	// that the request costs the pod its service time in all, as in simulate. Only
	// for a process that does nothing but serve: the measurement is the process's.
	SubtractOverhead bool
}

// Server is one pod's app. Serve runs it; Terminate sends it SIGTERM.
type Server struct {
	cfg  Config
	pod  *scenario.Pod
	http *http.Server
	grpc *grpc.Server // nil unless Config.GRPC
	// answer is a gRPC call's answer, of responseBytes.
	answer []byte

	work, wait dist.Sampler
	rngMu      sync.Mutex
	rng        *rand.Rand
	acceptCost time.Duration
	logCPU     time.Duration
	workers    gate
	body       []byte // a chunk of filler, written as often as an answer needs

	callees map[string]*callee // the Services the pod calls (calls.go), by name
	after   *dist.Sampler      // CPU after the calls; nil for none

	// What the app did (figures.go): requests answered, 503s of failed calls, and
	// the time it held them.
	answered, unavailable atomic.Int64
	held                  *latencies

	overhead *overhead  // nil unless Config.SubtractOverhead
	log      *accessLog // nil without accessLog in the spec
	logStop  chan struct{}

	mu       sync.Mutex
	cond     sync.Cond // signalled when inflight drops to 0
	serving  bool
	started  time.Time
	inflight int  // handlers running the request path
	gone     bool // the process has exited: no more handlers

	terminating atomic.Bool // SIGTERM received: not ready any more
	draining    atomic.Bool
	termOnce    sync.Once
	cutOnce     sync.Once
	stop        chan struct{} // closed at exit: work in progress is abandoned
	unlistened  chan struct{} // closed once a drain has closed the listener
	exited      chan struct{} // closed once the listener and every connection are closed
}

// New checks cfg and builds the server.
func New(cfg Config) (*Server, error) {
	p := cfg.Pod
	switch {
	case p == nil:
		return nil, errors.New("serve: no pod spec")
	case p.ResponseBytes == nil || p.TerminationGracePeriodSeconds == nil || p.MaxConcurrentStreams == nil || p.HTTP2 == nil:
		return nil, errors.New("serve: the pod spec lacks its defaults: load it with scenario.Load or serve.ParsePod")
	case cfg.Name == "":
		return nil, errors.New("serve: no pod name")
	case cfg.ReadyAfter < 0:
		return nil, fmt.Errorf("serve: ready-after %v is negative", cfg.ReadyAfter)
	}
	switch cfg.Work {
	case "":
		cfg.Work = Burn
	case Burn, Sleep:
	default:
		return nil, fmt.Errorf("serve: work %q: want %s or %s", cfg.Work, Burn, Sleep)
	}
	s := &Server{
		cfg: cfg, pod: p,
		rng:        sim.Stream(cfg.Seed, "pod/"+cfg.Name),
		acceptCost: p.AcceptCost.Duration,
		workers:    gate{n: p.Concurrency},
		body:       make([]byte, min(max(0, *p.ResponseBytes), 64<<10)),
		stop:       make(chan struct{}),
		unlistened: make(chan struct{}),
		exited:     make(chan struct{}),
		held:       newLatencies(),
	}
	s.cond.L = &s.mu
	if cfg.SubtractOverhead {
		s.overhead = &overhead{}
	}
	var err error
	if s.work, err = dist.New(p.ServiceTime.Spec()); err != nil {
		return nil, fmt.Errorf("serve: serviceTime: %w", err)
	}
	if s.wait, err = dist.New(p.WaitTime.Spec()); err != nil {
		return nil, fmt.Errorf("serve: waitTime: %w", err)
	}
	for i := range s.body {
		s.body[i] = 'x'
	}
	if a := p.AccessLog; a != nil {
		s.logCPU = a.CPU.Duration
		s.log = newAccessLog(cfg.AccessLog, a, cfg.Name)
	}

	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	s.http = &http.Server{
		Handler:   http.HandlerFunc(s.handle),
		Protocols: &protocols,
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams:          *p.MaxConcurrentStreams,
			MaxReceiveBufferPerStream:     int(*p.HTTP2.StreamWindowBytes),
			MaxReceiveBufferPerConnection: int(*p.HTTP2.ConnectionWindowBytes),
		},
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, &conn{Conn: c})
		},
		// pod.idleTimeout: net/http closes a keep-alive connection no request came
		// on for this long (server.go, conn.serve's SetReadDeadline before reading
		// the next request); 0 waits for ever, as ReadTimeout is 0 too.
		IdleTimeout: p.IdleTimeout.Duration,
		// Nothing per request on stderr: net/http would log aborted handlers and
		// HTTP/2 protocol errors there.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	// Shutdown runs its hooks once it has closed the listeners (net/http server.go
	// Shutdown), which lets Terminate return only after that: from then on a new
	// connection is refused, as the simulator's draining pod refuses it.
	var once sync.Once
	s.http.RegisterOnShutdown(func() { once.Do(func() { close(s.unlistened) }) })
	if err := s.setupCalls(); err != nil {
		return nil, err
	}
	if cfg.GRPC {
		s.grpc = s.newGRPC()
	}
	return s, nil
}

// Serve answers on ln until the process would exit: at once after Terminate with the
// exit action, after the drain with drain, or when ln fails. It returns nil after a
// Terminate, else the listener's error. It closes ln, and returns only once no
// handler runs any more. Call it once.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.serving {
		s.mu.Unlock()
		ln.Close()
		return errors.New("serve: Serve called twice")
	}
	s.serving, s.started = true, time.Now()
	s.mu.Unlock()
	if s.log != nil {
		s.logStop = make(chan struct{})
		go s.log.flushEvery(logFlushInterval, s.logStop)
	}
	if s.overhead != nil {
		go s.overhead.measure(s.stop)
	}

	if s.grpc != nil {
		var h2 net.Listener
		ln, h2 = split(ln)
		go s.grpc.Serve(h2)
	}
	err := s.http.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
		<-s.exited
	} else {
		s.cut() // the listener failed; the process goes down with it
	}
	s.mu.Lock()
	s.gone = true
	for s.inflight > 0 {
		s.cond.Wait()
	}
	s.mu.Unlock()
	if s.log != nil {
		close(s.logStop)
		s.log.flush()
	}
	return err
}

// Terminate is SIGTERM, which the kubelet sends once the preStop hook is done. The
// app stops being ready, then does what spec.onSigterm says (onSigterm in
// simulate/lifecycle/termination.go):
//
//   - exit: the process ends at once. The kernel closes its sockets: a connection
//     whose request the app was serving gets a FIN (the client reads EOF); one whose
//     request still waited for a worker, unread as far as a thread-pool app is
//     concerned, gets a reset (podCluster.Exited in simulate/lifecycle.go: errClosed
//     and errReset).
//   - drain: as Go's http.Server.Shutdown, which the simulator's model follows: the
//     listener closes (new connections are refused), idle keep-alive connections
//     close, HTTP/2 connections get GOAWAY, requests in progress and queued finish
//     and are answered with Connection: close; the process exits when nothing is
//     left (Drained), or is cut as with exit at SIGKILL or at the app's
//     drainTimeout, whichever comes first (Delete, onKill).
//
// Terminate returns once the listener is closed; Serve returns when the process
// would have exited.
// Calling it again does nothing.
func (s *Server) Terminate() {
	s.termOnce.Do(func() {
		s.terminating.Store(true)
		if s.pod.OnSigterm.Action != scenario.SigtermDrain {
			s.cut()
			return
		}
		s.draining.Store(true)
		defer func() {
			select {
			case <-s.unlistened:
			case <-s.exited:
			}
		}()
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), drainLimit(s.pod))
			defer cancel()
			stopped := make(chan struct{})
			if s.grpc == nil {
				close(stopped)
			} else {
				// grpc-go's GracefulStop sends GOAWAY on every connection and waits
				// for the calls in progress; a call the client sent before hearing
				// it is refused unprocessed, and the client retries it elsewhere.
				go func() {
					s.grpc.GracefulStop()
					close(stopped)
				}()
			}
			// The exit trails the last answer by up to about half a second, as a
			// Go app's does: an HTTP/1.1 connection answered with Connection:
			// close lingers 500 ms half-closed (net/http server.go
			// closeWriteAndWait, rstAvoidanceDelay), and Shutdown polls for idle
			// connections with a back-off up to 500 ms (shutdownPollIntervalMax).
			// The listener is closed all along, and the answers are out.
			s.http.Shutdown(ctx)
			select {
			case <-stopped:
			case <-ctx.Done():
			}
			s.cut()
		}()
	})
}

// drainLimit is how long a drain may last after SIGTERM: until the kubelet's
// SIGKILL (kubelet.Termination), or the app's own drainTimeout if sooner.
func drainLimit(p *scenario.Pod) time.Duration {
	sigterm, sigkill := kubelet.Termination(p.TerminationSpec())
	limit := sigkill - sigterm
	if d := p.OnSigterm.DrainTimeout; d != nil {
		limit = min(limit, d.Duration)
	}
	return limit
}

// cut ends the process: what the kernel does to its sockets when it exits.
func (s *Server) cut() {
	s.cutOnce.Do(func() {
		s.terminating.Store(true)
		for _, c := range s.workers.queued() {
			if c != nil && c.inService.Load() == 0 {
				c.reset()
			}
		}
		s.http.Close()
		if s.grpc != nil {
			s.grpc.Stop()
		}
		close(s.stop)
		close(s.exited)
	})
}

// ready is the readiness endpoint's answer.
func (s *Server) ready() bool {
	if s.terminating.Load() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.serving && time.Since(s.started) >= s.cfg.ReadyAfter
}

// conn is one accepted connection.
type conn struct {
	net.Conn
	inService atomic.Int32 // its requests holding a worker
	accepted  atomic.Bool  // its first request has paid the accept cost
}

type connKey struct{}

// reset makes the close of c send a reset instead of a FIN (SO_LINGER 0), as the
// kernel does for a socket closed with unread data.
func (c *conn) reset() {
	if l, ok := c.Conn.(interface{ SetLinger(int) error }); ok {
		l.SetLinger(0)
	}
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	w.Header().Set(PodHeader, s.cfg.Name)
	switch r.URL.Path {
	case ReadyPath:
		if !s.ready() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ready\n")
		return
	case LivePath:
		io.WriteString(w, "alive\n")
		return
	}
	if !s.enter() {
		panic(http.ErrAbortHandler)
	}
	defer s.leave()
	io.Copy(io.Discard, r.Body) // the request arrives whole before the app works on it
	c, _ := r.Context().Value(connKey{}).(*conn)
	failed, ok := s.serveRequest(c)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	status := http.StatusOK
	if failed {
		status = http.StatusServiceUnavailable // a call it made failed after its retries
	}
	s.respond(w, r, status)
}

// serveRequest does what the app does for a request that has arrived whole on c
// (nil when the engine gives none): wait for a worker, spend the sampled CPU and
// off-CPU time, make the calls, write the log line. It reports whether a call
// failed, and false ok when the process exited meanwhile and nothing may answer.
func (s *Server) serveRequest(c *conn) (failed, ok bool) {
	arrived := time.Now()
	if !s.workers.acquire(c, s.stop) {
		return false, false // the process exited: the connection is gone
	}
	if c != nil {
		c.inService.Add(1)
		defer c.inService.Add(-1)
	}
	cpu, wait := s.sample()
	if c != nil && c.accepted.CompareAndSwap(false, true) {
		cpu += s.acceptCost // simulate/server.go start: paid by a connection's first request
	}
	cpu += s.logCPU
	if s.overhead != nil {
		cpu = s.overhead.take(cpu)
	}
	ok = s.spend(cpu) && sleep(wait, s.stop)
	if ok && len(s.callees) > 0 {
		// The app does not watch for its caller's close: its calls go on when the
		// caller gives up, as in simulate.
		failed, ok = s.makeCalls(context.Background())
		if ok && !failed && s.after != nil {
			ok = s.spend(s.sampleAfter())
		}
	}
	if ok && s.log != nil {
		s.log.write()
	}
	// The worker is free once the answer is handed to the network
	// (simulate/server.go finish).
	s.workers.release()
	if !ok {
		return false, false
	}
	if failed {
		s.unavailable.Add(1)
	}
	s.answered.Add(1)
	s.held.record(time.Since(arrived))
	return failed, true
}

// enter counts a handler in, unless the process has exited.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return false
	}
	s.inflight++
	return true
}

func (s *Server) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight--; s.inflight == 0 {
		s.cond.Broadcast()
	}
}

// sample draws a request's CPU work and off-CPU wait from the pod's stream, in that
// order, as simulate/server.go start does when a worker takes the request.
func (s *Server) sample() (cpu, wait time.Duration) {
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	cpu = time.Duration(s.work.Sample(s.rng))
	wait = time.Duration(s.wait.Sample(s.rng))
	return cpu, wait
}

// sampleAfter draws the CPU work after a request's calls.
func (s *Server) sampleAfter() time.Duration {
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	return time.Duration(s.after.Sample(s.rng))
}

// spend does d of CPU work, burnt or slept as configured; false if the process
// exited meanwhile.
func (s *Server) spend(d time.Duration) bool {
	if s.cfg.Work == Sleep {
		return sleep(d, s.stop)
	}
	if s.overhead != nil {
		defer s.overhead.burnt.Add(int64(d))
	}
	return burn(d, s.stop)
}

// Overhead is the CPU a request costs the process beside its burnt work, as last
// measured with Config.SubtractOverhead; 0 without it or before enough requests.
func (s *Server) Overhead() time.Duration {
	if s.overhead == nil {
		return 0
	}
	return time.Duration(s.overhead.estimate.Load())
}

// sleep waits d off-CPU; false if stop closed first.
func sleep(d time.Duration, stop <-chan struct{}) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	}
}

// respond answers status (200, or 503 when a call failed) with a response of the
// pod's responseBytes, which counts the status line and headers (scenario/types.go
// Pod.ResponseBytes); the body is the rest. The size is exact for HTTP/1.1. HTTP/2
// sends the same body, with its headers compressed (HPACK), so its answer is
// somewhat smaller.
func (s *Server) respond(w http.ResponseWriter, r *http.Request, status int) {
	h := w.Header()
	h.Set("Content-Type", "text/plain")
	if s.draining.Load() && r.ProtoMajor == 1 {
		// Go's Shutdown would add it too (server.go doKeepAlives); saying it here
		// also covers an answer racing the start of the drain.
		h.Set("Connection", "close")
	}
	n := bodySize(int(*s.pod.ResponseBytes), http1HeaderBytes(h, r, status))
	h.Set("Content-Length", strconv.Itoa(n))
	w.WriteHeader(status)
	for n > 0 {
		k := min(n, len(s.body))
		if _, err := w.Write(s.body[:k]); err != nil {
			return // the client is gone
		}
		n -= k
	}
}

// http1HeaderBytes counts what net/http writes before the body of an answer of status
// with headers h, except the Content-Length line: the status line ("HTTP/1.1 200
// OK"), h, the Date line and the Connection line it adds itself (net/http server.go
// chunkWriter.writeHeader), and the blank line.
func http1HeaderBytes(h http.Header, r *http.Request, status int) int {
	n := len("HTTP/1.1 ") + len(strconv.Itoa(status)) + len(" ") + len(http.StatusText(status)) + len("\r\n") +
		len("Date: Mon, 02 Jan 2006 15:04:05 GMT\r\n") + len("\r\n")
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(": ") + len(v) + len("\r\n")
		}
	}
	if h.Get("Connection") == "" {
		switch {
		case r.Close:
			n += len("Connection: close\r\n")
		case r.ProtoMajor == 1 && r.ProtoMinor == 0:
			n += len("Connection: keep-alive\r\n")
		}
	}
	return n
}

// bodySize is the largest body whose answer, with a Content-Length line for it and
// headers of header bytes, is at most total bytes; 0 when the headers alone exceed it.
func bodySize(total, header int) int {
	const line = len("Content-Length: \r\n")
	for digits := 1; digits <= 19; digits++ { // the body shrinks as its length grows
		b := total - header - line - digits
		if b >= 0 && len(strconv.Itoa(b)) <= digits {
			return b
		}
	}
	return 0
}

// accessLog writes one line of the spec's size per request, while the request still
// holds its worker, after its wait (simulate/logging.go handled).
type accessLog struct {
	mu   sync.Mutex
	out  io.Writer
	buf  *bufio.Writer // accessLog.sync false: lines wait in the app's buffer
	line []byte
}

func newAccessLog(w io.Writer, spec *scenario.AccessLog, pod string) *accessLog {
	if w == nil {
		w = io.Discard
	}
	size := 200 // scenario's default, in case the spec was not defaulted
	if spec.Bytes != nil {
		size = int(max(1, *spec.Bytes))
	}
	line := []byte(fmt.Sprintf("pod=%s status=200 ", pod))
	for len(line) < size-1 {
		line = append(line, '.')
	}
	line = append(line[:size-1], '\n')
	l := &accessLog{out: w, line: line}
	if spec.Sync != nil && !*spec.Sync {
		size := 256 << 10
		if spec.BufferBytes != nil {
			size = int(max(1, *spec.BufferBytes))
		}
		l.buf = bufio.NewWriterSize(w, size)
	}
	return l
}

// write writes a line: straight to the output (zap's default, os.Stdout behind a
// lock), or into the buffer, which writes out whenever it fills.
func (l *accessLog) write() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf != nil {
		l.buf.Write(l.line)
		return
	}
	l.out.Write(l.line)
}

func (l *accessLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf != nil {
		l.buf.Flush()
	}
}

func (l *accessLog) flushEvery(d time.Duration, stop <-chan struct{}) {
	if l.buf == nil {
		return
	}
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			l.flush()
		case <-stop:
			return
		}
	}
}
