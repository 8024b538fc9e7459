package load_test

import (
	"context"
	"net"
	"testing"
	"time"

	"trafficlab/emulate/load"
	"trafficlab/emulate/serve"
	"trafficlab/scenario"
)

// grpcPod serves one gRPC pod on loopback until the test ends.
func grpcPod(t *testing.T, name, spec string) string {
	t.Helper()
	p, diags := serve.ParsePod("test", []byte(spec))
	if p == nil {
		t.Fatal(diags)
	}
	s, err := serve.New(serve.Config{Pod: p, Name: name, Work: serve.Sleep, GRPC: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		s.Terminate()
		<-done
	})
	return ln.Addr().String()
}

// The gRPC client calls through grpc-go channels: a shared channel keeps one
// connection for every thread (pick_first), reuse none opens one per call; every
// call is answered and names its pod; a server's maxConnectionAge makes the shared
// channel reconnect with no call failing.
func TestGRPCLoad(t *testing.T) {
	for _, c := range []struct {
		name, reuse, pod string
		conns            func(calls, opened int64) bool
	}{
		{"shared", scenario.ReuseShared, "", func(_, opened int64) bool { return opened == 1 }},
		{"none", scenario.ReuseNone, "", func(calls, opened int64) bool { return opened >= calls }},
		// 1.5 s at ages of 270 to 330 ms: 5 to 6 connections, give or take one.
		{"shared, aged", scenario.ReuseShared, "\ngrpc: {maxConnectionAge: 300ms}", func(_, opened int64) bool { return opened >= 4 && opened <= 7 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := grpcPod(t, "orders-0", "serviceTime: {distribution: constant, value: 1ms}"+c.pod)
			cfg := load.Config{Target: "http://" + addr + "/", Duration: 1500 * time.Millisecond, Timeout: 5 * time.Second,
				Phases: []load.Phase{{Threads: 4}},
				Conn:   load.Connections{Reuse: c.reuse, Protocol: scenario.ProtocolGRPC}}
			rep, err := load.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			q := rep.Requests
			t.Logf("%d calls, %d connections, errors %+v, other %v", q.OK, rep.Connections.Opened, rep.Errors, rep.OtherErrors)
			if q.Failed != 0 || q.OK < 100 {
				t.Errorf("%d answered, %d failed: want every call answered", q.OK, q.Failed)
			}
			if len(rep.Pods) != 1 || rep.Pods[0].Name != "orders-0" || rep.Pods[0].Requests != q.OK {
				t.Errorf("pods %+v, want orders-0 answering all %d", rep.Pods, q.OK)
			}
			if !c.conns(q.OK, rep.Connections.Opened) {
				t.Errorf("%d connections for %d calls", rep.Connections.Opened, q.OK)
			}
		})
	}
}
