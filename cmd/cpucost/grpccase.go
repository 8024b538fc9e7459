package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/stats"
)

// grpcGo: grpc-go's unary calls (the health service's Check, a small request and
// answer) on one ClientConn kept for all of them, and on a new ClientConn (and so
// a new connection) per call, against a grpc-go server counting connections and
// calls.
func grpcGo(e *env) ([]sample, error) {
	srv, err := e.startDaemon(serverCPU, "grpc-serve")
	if err != nil {
		return nil, err
	}
	defer srv.close()
	return e.repeat(func() ([]sample, error) {
		run := func(figure string, reuse bool) (sample, error) {
			s, _, err := e.inside(srv, figure, clientCPU, false,
				e.self, "child", "grpc-client", "-addr", srv.addr, "-n", strconv.Itoa(e.n), "-reuse="+strconv.FormatBool(reuse))
			return s, err
		}
		kept, err := run("per call on one ClientConn", true)
		if err != nil {
			return nil, err
		}
		fresh, err := run("per call, a new ClientConn each", false)
		if err != nil {
			return nil, err
		}
		return []sample{kept, fresh, perConn("per new ClientConn and connection", fresh, kept)}, nil
	})
}

// warmService is the health service name the clients' warm-up calls ask for: the
// server leaves them out of its counts.
const warmService = "warm"

// grpcServe is grpc-go's server with the health service, SERVING for every name.
// It prints its address, then answers stats lines as serve does: the connections
// whose first call was a measured one, and the measured calls.
func grpcServe() error {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return err
	}
	var conns, calls atomic.Int64
	h := health.NewServer()
	h.SetServingStatus(warmService, healthpb.HealthCheckResponse_SERVING)
	s := grpc.NewServer(grpc.StatsHandler(connTagger{}),
		grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			// A connection counts when its first call is a measured one, as serve
			// counts them.
			served := ctx.Value(connKey{}).(*atomic.Bool).Swap(true)
			if r, ok := req.(*healthpb.HealthCheckRequest); ok && r.GetService() != warmService {
				calls.Add(1)
				if !served {
					conns.Add(1)
				}
			}
			return handler(ctx, req)
		}))
	healthpb.RegisterHealthServer(s, h)
	go s.Serve(ln)
	defer s.Stop()
	fmt.Println(ln.Addr())
	return answerStats(func(string) any { return srvStats{conns.Load(), calls.Load()} })
}

type connKey struct{}

// connTagger gives each connection a flag its first call sets.
type connTagger struct{}

func (connTagger) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return context.WithValue(ctx, connKey{}, new(atomic.Bool))
}
func (connTagger) HandleConn(context.Context, stats.ConnStats)                     {}
func (connTagger) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (connTagger) HandleRPC(context.Context, stats.RPCStats)                       {}

// grpcClient makes n health checks on addr, on one ClientConn (reuse) or each on a
// new one, after warm-up calls, and prints what they cost this process.
func grpcClient(addr string, n int, reuse bool) error {
	dial := func() (*grpc.ClientConn, error) {
		return grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	shared, err := dial()
	if err != nil {
		return err
	}
	defer shared.Close()
	check := func(cc *grpc.ClientConn, service string) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
		return err == nil && r.GetStatus() == healthpb.HealthCheckResponse_SERVING
	}
	for range warmup {
		check(shared, warmService)
	}
	call := func() bool { return check(shared, "") }
	if !reuse {
		call = func() bool {
			cc, err := dial()
			if err != nil {
				return false
			}
			defer cc.Close()
			return check(cc, "")
		}
	}
	return json.NewEncoder(os.Stdout).Encode(measure(n, call))
}
