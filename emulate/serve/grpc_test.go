package serve

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"trafficlab/emulate/grpcwire"
	"trafficlab/result"
)

// dialCounting is a grpc-go channel to addr that counts the connections it opens.
func dialCounting(t *testing.T, addr string, opened *atomic.Int64) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) {
			opened.Add(1)
			return (&net.Dialer{}).DialContext(ctx, "tcp", a)
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// A gRPC pod answers calls on grpc-go's server, naming itself, and its probes
// still over HTTP/1.1 on the same port. With maxConnectionAge the server ends each
// connection within its age ±10 %: a channel calling for 2.5 s at a 600 ms age
// opens at least 3 connections, and no call fails (those refused after GOAWAY are
// retried by grpc-go).
func TestGRPCCallsAndMaxConnectionAge(t *testing.T) {
	st := start(t, Config{Pod: testPod(t, "serviceTime: {distribution: constant, value: 1ms}\nresponseBytes: 300\ngrpc: {maxConnectionAge: 600ms}"),
		Work: Sleep, GRPC: true})
	waitFor(t, func() bool { return readiness(st.Server) == 200 })
	if resp, _, err := get(client(t, false), st.addr, ReadyPath); err != nil || resp.StatusCode != 200 {
		t.Fatalf("HTTP/1.1 probe beside gRPC: %v %v", resp, err)
	}
	var opened atomic.Int64
	cc := dialCounting(t, st.addr, &opened)
	calls := 0
	for end := time.Now().Add(2500 * time.Millisecond); time.Now().Before(end); calls++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		pod, err := grpcwire.Call(ctx, cc, make([]byte, 100))
		cancel()
		if err != nil || pod != "web-0" {
			t.Fatalf("call %d: pod %q, %v", calls, pod, err)
		}
	}
	// Ages of 540 to 660 ms over 2.5 s: at least 3 connections, at most 6 (a
	// reconnect takes a little besides).
	if n := opened.Load(); n < 3 || n > 6 {
		t.Errorf("%d connections for %d calls over 2.5 s at a 600 ms age, want 3 to 6", n, calls)
	}
	if got := st.answered.Load(); got != int64(calls) {
		t.Errorf("the app answered %d calls, the client made %d", got, calls)
	}
}

// A gRPC pod that exits cuts the calls in progress: the client sees them closed.
func TestGRPCExitClosesCalls(t *testing.T) {
	st := start(t, Config{Pod: testPod(t, "serviceTime: {distribution: constant, value: 5s}\nonSigterm: {action: exit}"), Work: Sleep, GRPC: true})
	var opened atomic.Int64
	cc := dialCounting(t, st.addr, &opened)
	errc := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := grpcwire.Call(ctx, cc, nil)
		errc <- err
	}()
	st.inService(t, 1, 0)
	st.Terminate()
	err := <-errc
	if k, ok := grpcwire.Kind(err); !ok || k != result.ErrorConnectionClosed {
		t.Errorf("call cut by the exit: %v (kind %v, %v), want closed", err, k, ok)
	}
}

// maxConnectionAgeGrace: grpc-go closes an aged connection that long after its
// GOAWAY, then waits 1 s for its client to close first (http2_server.go, issue
// 5358), and a call still on it fails, closed: here 0.27 to 0.33 s of age, 0.2 s
// of grace and 1 s, well before the call's 5 s.
func TestGRPCMaxConnectionAgeGrace(t *testing.T) {
	st := start(t, Config{Pod: testPod(t, "serviceTime: {distribution: constant, value: 5s}\ngrpc: {maxConnectionAge: 300ms, maxConnectionAgeGrace: 200ms}"),
		Work: Sleep, GRPC: true})
	var opened atomic.Int64
	cc := dialCounting(t, st.addr, &opened)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t0 := time.Now()
	_, err := grpcwire.Call(ctx, cc, nil)
	took := time.Since(t0)
	if k, ok := grpcwire.Kind(err); !ok || k != result.ErrorConnectionClosed || took < 1400*time.Millisecond || took > 3*time.Second {
		t.Errorf("a 5 s call: %v after %v, want closed after about 1.5 s", err, took)
	}
}
