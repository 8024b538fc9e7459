package simulate

import "testing"

// A gRPC channel keeps one connection, so behind a ClusterIP each client pod's
// calls all go to one pod, and pods added by a scale-out get none. A server
// maxConnectionAge sends GOAWAY on each connection within its age ±10 %: the
// channels reconnect through kube-proxy and spread over the pods, new ones
// included, with no call failing (those refused after a GOAWAY are retried).
func TestGRPCPinningAndMaxConnectionAge(t *testing.T) {
	for _, c := range []struct {
		name, grpc string
		newPodsGet bool
	}{
		{"pinned for ever", "", false},
		{"maxConnectionAge 30s", "\n      grpc: {maxConnectionAge: 30s}", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := build(t, opts{replicas: 2, duration: "150s",
				pod:    "      serviceTime: {distribution: exponential, mean: 1ms}" + c.grpc,
				client: "    replicas: 4\n    threads: 4\n    library: grpc-go\n    thinkTime: {distribution: constant, value: 10ms}"})
			r := runScaling(e, 60*sec, 6)
			cl := r.Clients[0]
			if r.Errors.Total() != 0 {
				t.Errorf("errors %+v, want none", r.Errors)
			}
			var toNew int64
			for _, p := range r.Pods {
				if p.StartS > 0 {
					toNew += p.Requests
				}
			}
			// Each connection lives 27 to 33 s (its age, a round trip on): in 150 s a
			// client pod opens 5 or 6, 20 to 24 in all.
			opened := cl.ConnectionsOpened
			t.Logf("%d connections opened, %d of %d calls to the new pods, peak %d open", opened, toNew, r.Requests.OK, cl.PeakOpen)
			if !c.newPodsGet {
				// Which client pod holds which connection: each its channel's one.
				for _, h := range cl.Held {
					if len(h.To) != 1 {
						t.Errorf("%s holds connections to %v, want one pod", h.Pod, h.To)
					}
				}
				if len(cl.Held) != 4 {
					t.Errorf("held %+v, want the 4 client pods", cl.Held)
				}
			}
			switch {
			case !c.newPodsGet && (toNew != 0 || opened != 4):
				t.Errorf("%d calls to the new pods over %d connections; want none, over one connection per client pod", toNew, opened)
			case c.newPodsGet && (toNew == 0 || opened < 20 || opened > 24):
				t.Errorf("%d calls to the new pods over %d connections; want some, over 20 to 24", toNew, opened)
			}
		})
	}
}

// maxConnectionAgeGrace closes an aged connection that long after its GOAWAY, and
// grpc-go's 1 s linger later: the calls still on it fail, closed. Calls of 3 s
// outlive a 100 ms grace and the linger; without a grace they finish on the old
// connection.
func TestGRPCMaxConnectionAgeGrace(t *testing.T) {
	for _, c := range []struct {
		name, grace string
		fail        bool
	}{
		{"no grace", "", false},
		{"grace 100ms", ", maxConnectionAgeGrace: 100ms", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, opts{replicas: 1, duration: "10s",
				pod:    "      serviceTime: {distribution: constant, value: 3s}\n      concurrency: 8\n      grpc: {maxConnectionAge: 1s" + c.grace + "}",
				client: "    threads: 4\n    library: grpc-go"})
			t.Logf("%d answered, errors %+v, %d connections", r.Requests.OK, r.Errors, r.Clients[0].ConnectionsOpened)
			if got := r.Errors.ConnectionClosed > 0; got != c.fail || r.Errors.Total() != r.Errors.ConnectionClosed {
				t.Errorf("errors %+v; want calls cut off, closed: %v", r.Errors, c.fail)
			}
			// A new connection at each aged one's GOAWAY, as calls come: one every
			// 3 s without a grace, more with one as cut calls come back at once.
			if r.Clients[0].ConnectionsOpened < 4 {
				t.Errorf("%d connections in 10 s at a 1 s age", r.Clients[0].ConnectionsOpened)
			}
		})
	}
}
