package serve

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"trafficlab/emulate/grpcwire"
)

// A pod whose clients speak gRPC answers on grpc-go's own server (its transport,
// not net/http's), so that pod.grpc's maxConnectionAge is grpc-go's
// keepalive.ServerParameters, GOAWAY, jitter and all. Its HTTP/1.1 probes still
// reach the HTTP server: the listener hands a connection that opens with
// HTTP/2's preface to gRPC, any other to HTTP.

// newGRPC builds the pod's gRPC server.
func (s *Server) newGRPC() *grpc.Server {
	p := s.pod
	opts := []grpc.ServerOption{
		grpc.ForceServerCodec(grpcwire.Codec{}),
		grpc.MaxConcurrentStreams(uint32(*p.MaxConcurrentStreams)),
		grpc.InitialWindowSize(int32(*p.HTTP2.StreamWindowBytes)),
		grpc.InitialConnWindowSize(int32(*p.HTTP2.ConnectionWindowBytes)),
		grpc.StatsHandler(connTags{}),
	}
	if g := p.GRPC; g != nil && g.MaxConnectionAge != nil {
		params := keepalive.ServerParameters{MaxConnectionAge: g.MaxConnectionAge.Duration}
		if g.MaxConnectionAgeGrace != nil {
			params.MaxConnectionAgeGrace = g.MaxConnectionAgeGrace.Duration
		}
		opts = append(opts, grpc.KeepaliveParams(params))
	}
	gs := grpc.NewServer(opts...)
	s.answer = make([]byte, max(0, *p.ResponseBytes))
	grpcwire.Register(gs, s.cfg.Name, s.handleCall)
	return gs
}

// handleCall answers one gRPC call as handle answers an HTTP request.
func (s *Server) handleCall(ctx context.Context, _ []byte) ([]byte, error) {
	if !s.enter() {
		return nil, status.Error(codes.Unavailable, "the pod exited")
	}
	defer s.leave()
	c, _ := ctx.Value(connKey{}).(*conn)
	failed, ok := s.serveRequest(c)
	switch {
	case !ok:
		return nil, status.Error(codes.Unavailable, "the pod exited")
	case failed:
		return nil, status.Error(codes.Internal, "a call the pod made failed")
	}
	return s.answer, nil
}

// connTags gives each gRPC connection the conn its first call's accept cost is
// charged to.
type connTags struct{}

func (connTags) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return context.WithValue(ctx, connKey{}, &conn{})
}
func (connTags) HandleConn(context.Context, stats.ConnStats)                     {}
func (connTags) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (connTags) HandleRPC(context.Context, stats.RPCStats)                       {}

// h2Preface opens every HTTP/2 connection (RFC 9113 section 3.4).
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// prefaceWait bounds how long an accepted connection may stay silent before it is
// taken for HTTP/1.1.
const prefaceWait = 10 * time.Second

// split divides ln's connections between an HTTP/1.1 listener and an HTTP/2 (gRPC)
// one. Closing either closes ln.
func split(ln net.Listener) (http1, h2 net.Listener) {
	sp := &splitter{ln: ln, done: make(chan struct{}), http1: make(chan net.Conn), h2: make(chan net.Conn)}
	go sp.accept()
	return &side{sp, sp.http1}, &side{sp, sp.h2}
}

type splitter struct {
	ln        net.Listener
	closeOnce sync.Once
	done      chan struct{}
	err       error
	http1, h2 chan net.Conn
}

func (sp *splitter) accept() {
	for {
		c, err := sp.ln.Accept()
		if err != nil {
			sp.err = err
			sp.close()
			return
		}
		go sp.sort(c)
	}
}

// sort reads what c opens with and hands it on, its first bytes put back.
func (sp *splitter) sort(c net.Conn) {
	head := make([]byte, len(h2Preface))
	c.SetReadDeadline(time.Now().Add(prefaceWait))
	n, _ := io.ReadFull(c, head)
	c.SetReadDeadline(time.Time{})
	to := sp.http1
	if n == len(head) && string(head) == h2Preface {
		to = sp.h2
	}
	select {
	case to <- &prefixed{Conn: c, r: io.MultiReader(bytes.NewReader(head[:n]), c)}:
	case <-sp.done:
		c.Close()
	}
}

func (sp *splitter) close() {
	sp.closeOnce.Do(func() {
		close(sp.done)
		sp.ln.Close()
	})
}

// side is one of split's listeners.
type side struct {
	sp    *splitter
	conns chan net.Conn
}

func (s *side) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.sp.done:
		if s.sp.err != nil && !errors.Is(s.sp.err, net.ErrClosed) {
			return nil, s.sp.err
		}
		return nil, net.ErrClosed
	}
}

func (s *side) Close() error   { s.sp.close(); return nil }
func (s *side) Addr() net.Addr { return s.sp.ln.Addr() }

// prefixed is a connection whose first bytes were read already.
type prefixed struct {
	net.Conn
	r io.Reader
}

func (p *prefixed) Read(b []byte) (int, error) { return p.r.Read(b) }
