package load

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/peer"

	"trafficlab/emulate/grpcwire"
	"trafficlab/scenario"
)

// The gRPC client: a grpc-go channel (ClientConn) per pool, calling the pods'
// one unary method (grpcwire). What the channel does with its connections is
// grpc-go's own: pick_first keeps one connection; round_robin one per address its
// target resolves to; a GOAWAY makes it reconnect, and a call the server refused
// unprocessed is retried on the new connection without the caller seeing it. Every
// grpc-* library is run as grpc-go.
//
//	reuse shared      one channel for the whole client pod (what gRPC's docs advise).
//	reuse per-thread  a channel per thread.
//	reuse none        a new channel, so a new connection, per call, closed after it.

// grpcPool is one channel, or with reuse none the way to make one per call.
type grpcPool struct {
	r      *runner
	target string
	opts   []grpc.DialOption
	cc     *grpc.ClientConn // nil with reuse none
	body   []byte
	err    error // the channel could not be made: every call fails with it
}

// grpcTarget is the channel's target for the pods behind cfg.Target's host.
func grpcTarget(cfg *Config) (string, error) {
	u, err := url.Parse(cfg.Target)
	if err != nil {
		return "", err
	}
	if _, err := netip.ParseAddr(u.Hostname()); err == nil {
		// An address the channel uses as it is: a ClusterIP resolves to itself.
		return "passthrough:///" + u.Host, nil
	}
	// A name grpc-go's DNS resolver looks up, at the cluster's DNS server when
	// one is given, and again after a lost connection, at most every 30 s.
	return "dns://" + cfg.DNS + "/" + u.Host, nil
}

func newGRPCPool(r *runner) *grpcPool {
	c := r.cfg.Conn
	p := &grpcPool{r: r, body: make([]byte, r.cfg.BodyBytes)}
	if p.target, p.err = grpcTarget(&r.cfg); p.err != nil {
		return p
	}
	p.opts = channelOptions(c, r.tracker)
	if c.Reuse != scenario.ReuseNone {
		if p.cc, p.err = grpc.NewClient(p.target, p.opts...); p.err != nil {
			p.err = fmt.Errorf("grpc channel to %s: %w", p.target, p.err)
		}
	}
	return p
}

func (p *grpcPool) exchange(w *worker, pr *phaseRun, now time.Time) (status int, pod string, end time.Time, err error) {
	if p.err != nil {
		return 0, "", now, p.err
	}
	ctx, cancel := context.WithDeadline(w.ctx, now.Add(p.r.cfg.Timeout))
	defer cancel()
	cc := p.cc
	if cc == nil {
		if cc, err = grpc.NewClient(p.target, p.opts...); err != nil {
			return 0, "", time.Now(), err
		}
		defer cc.Close()
	}
	var from peer.Peer
	pod, err = grpcwire.Call(ctx, cc, p.body, grpc.Peer(&from))
	if c := p.r.tracker.byLocal(from.LocalAddr); c != nil {
		w.conn.Store(c)
	}
	if err != nil {
		return 0, pod, time.Now(), err
	}
	return 200, pod, time.Now(), nil
}

// channelOptions are a channel's options for connections c, dialling through t.
func channelOptions(c Connections, t *tracker) []grpc.DialOption {
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return t.dial(ctx, "tcp", addr)
		}),
	}
	if c.StreamWindowBytes > 0 {
		opts = append(opts, grpc.WithInitialWindowSize(int32(c.StreamWindowBytes)))
	}
	if c.ConnectionWindowBytes > 0 {
		opts = append(opts, grpc.WithInitialConnWindowSize(int32(c.ConnectionWindowBytes)))
	}
	if c.LoadBalancing == scenario.RoundRobin {
		opts = append(opts, grpc.WithDefaultServiceConfig(`{"loadBalancingConfig": [{"round_robin":{}}]}`))
	}
	return opts
}

func (p *grpcPool) close() {
	if p.cc != nil {
		p.cc.Close()
	}
}
