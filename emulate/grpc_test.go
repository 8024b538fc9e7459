package emulate

import (
	"fmt"
	"testing"

	"trafficlab/emulate/emutest"
)

const grpcCluster = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: grpc}
spec:
  duration: 8s
  seed: 1
  cluster:
    nodes: [{name: node, count: 2}]
  services:
  - name: orders
    replicas: 4
    pod:
      serviceTime: {distribution: constant, value: 200us}
      cpu: 500m%s
  clients:
  - name: checkout
    target: orders
    replicas: 2
    threads: 2
    library: grpc-go
`

// gRPC for real, grpc-go at both ends: each client pod's channel keeps one
// connection behind the ClusterIP, so at most 2 of the 4 pods answer; with the
// server's maxConnectionAge (2 s) each channel reconnects about every 2 s through
// kube-proxy, and no call fails, those refused after a GOAWAY being retried.
func TestGRPCChannelsForReal(t *testing.T) {
	emutest.NeedRoot(t, "ip", "iptables-restore")
	for _, c := range []struct {
		name, grpc string
		conns      func(n int64) bool
	}{
		{"pinned", "", func(n int64) bool { return n == 2 }},
		// Ages of 1.8 to 2.2 s over 8 s: 4 or 5 connections a channel.
		{"aged", "\n      grpc: {maxConnectionAge: 2s}", func(n int64) bool { return n >= 7 && n <= 11 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := emulateDoc(t, "grpc.yaml", fmt.Sprintf(grpcCluster, c.grpc))
			cl := r.Clients[0]
			reached := 0
			for _, p := range r.Pods {
				if p.Requests > 0 {
					reached++
				}
			}
			t.Logf("%d calls, %d connections, %d pods reached, errors %+v", r.Requests.OK, cl.ConnectionsOpened, reached, r.Errors)
			if r.Requests.OK < 1000 || r.Requests.Failed != 0 {
				t.Errorf("requests %+v: want thousands answered, none failed", r.Requests)
			}
			if !c.conns(cl.ConnectionsOpened) {
				t.Errorf("%d connections", cl.ConnectionsOpened)
			}
			if c.grpc == "" && reached > 2 {
				t.Errorf("%d pods answered 2 pinned channels", reached)
			}
			// Which client pod holds which connection: a pinned channel's one.
			if c.grpc == "" && (len(cl.Held) != 2 || len(cl.Held[0].To) != 1 || len(cl.Held[1].To) != 1) {
				t.Errorf("held %+v, want each client pod's one connection to one pod", cl.Held)
			}
		})
	}
}
