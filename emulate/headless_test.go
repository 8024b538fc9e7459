package emulate

import (
	"fmt"
	"testing"

	"trafficlab/emulate/emutest"
)

const headlessCluster = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: headless}
spec:
  duration: 6s
  seed: 1
  cluster:
    nodes: [{name: node, count: 2}]
  services:
  - name: orders
    clusterIP: None
    replicas: 4
    pod:
      serviceTime: {distribution: constant, value: 200us}
      cpu: 500m
  clients:
  - name: checkout
    target: orders
    replicas: %d
    threads: 2
%s
`

// A headless Service for real: no kube-proxy rule, the clients resolve its name at
// the cluster's DNS server, which answers with the ready pods in a new order each
// time, and connect to the pod their library picks. A lookup per connection (Go)
// reaches every pod; the JVM's 30 s cache keeps a client pod on one; a pick_first
// channel on one per client pod; round_robin on all, evenly.
func TestHeadlessForReal(t *testing.T) {
	emutest.NeedRoot(t, "ip", "iptables-restore")
	for _, c := range []struct {
		name    string
		clients int
		client  string
		check   func(t *testing.T, counts []int64)
	}{
		{"go-net-http, a connection per request", 1, "    library: go-net-http\n    connections: {reuse: none}", func(t *testing.T, counts []int64) {
			if reached(counts) != 4 {
				t.Errorf("counts %v, want every pod reached", counts)
			}
		}},
		{"okhttp, a connection per request", 1, "    library: okhttp\n    connections: {reuse: none}", func(t *testing.T, counts []int64) {
			if reached(counts) != 1 {
				t.Errorf("counts %v, want one pod within the JVM's 30 s cache", counts)
			}
		}},
		{"grpc-go pick_first", 2, "    library: grpc-go", func(t *testing.T, counts []int64) {
			if reached(counts) > 2 {
				t.Errorf("counts %v, want at most the 2 channels' pods", counts)
			}
		}},
		{"grpc-go round_robin", 2, "    library: grpc-go\n    connections: {loadBalancing: round_robin}", func(t *testing.T, counts []int64) {
			lo, hi := counts[0], counts[0]
			for _, n := range counts {
				lo, hi = min(lo, n), max(hi, n)
			}
			// Calls in turn over 4 connections a channel: even but for the few
			// while the channels connect, and those in flight.
			if reached(counts) != 4 || float64(hi-lo) > 0.05*float64(hi) {
				t.Errorf("counts %v, want all 4 pods within 5 %%", counts)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := emulateDoc(t, "headless.yaml", fmt.Sprintf(headlessCluster, c.clients, c.client))
			var counts []int64
			for _, p := range r.Pods {
				counts = append(counts, p.Requests)
			}
			t.Logf("%d answered, %d connections, per pod %v, errors %+v", r.Requests.OK, r.Clients[0].ConnectionsOpened, counts, r.Errors)
			if r.Requests.OK < 500 || r.Requests.Failed != 0 {
				t.Errorf("requests %+v: want hundreds answered, none failed", r.Requests)
			}
			if !r.Services[0].Headless || r.Clients[0].Resolution == nil {
				t.Errorf("the Result does not record the headless Service and its client's resolution")
			}
			c.check(t, counts)
		})
	}
}

func reached(counts []int64) int {
	n := 0
	for _, c := range counts {
		if c > 0 {
			n++
		}
	}
	return n
}

const grpcCallsHeadless = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: calls}
spec:
  duration: 5s
  seed: 1
  cluster:
    nodes: [{name: node, count: 2}]
  services:
  - name: front
    replicas: 2
    pod:
      serviceTime: {distribution: constant, value: 200us}
      calls: [{service: back}]
      client: {library: grpc-go, connections: {loadBalancing: %s}}
  - name: back
    clusterIP: None
    replicas: 3
    pod: {serviceTime: {distribution: constant, value: 200us}}
  clients:
  - name: caller
    target: front
    threads: 4
    connections: {reuse: per-thread}
`

// Services that call a headless Service over gRPC, for real: each front pod's
// grpc-go channel resolves back's name at the cluster's DNS server; pick_first
// keeps one back pod per front pod, round_robin calls all three in turn.
func TestGRPCCallsToAHeadlessServiceForReal(t *testing.T) {
	emutest.NeedRoot(t, "ip", "iptables-restore")
	for _, policy := range []string{"pick_first", "round_robin"} {
		t.Run(policy, func(t *testing.T) {
			r := emulateDoc(t, "calls.yaml", fmt.Sprintf(grpcCallsHeadless, policy))
			var back []int64
			fronts := int64(0) // front pods that called: 4 connections to 2 pods may all pick one
			for _, p := range r.Pods {
				switch {
				case p.Service == "back":
					back = append(back, p.Requests)
				case p.Requests > 0:
					fronts++
				}
			}
			e := r.Edges[0]
			t.Logf("%d answered, calls per back pod %v, %d calling front pods, %d connections, edge errors %+v",
				r.Requests.OK, back, fronts, e.ConnectionsOpened, e.Errors)
			if r.Requests.OK < 500 || r.Requests.Failed != 0 || e.Errors.Total() != 0 {
				t.Fatalf("requests %+v, edge %+v: want hundreds answered, no call failed", r.Requests, e)
			}
			switch policy {
			case "pick_first":
				if int64(reached(back)) > fronts || e.ConnectionsOpened != fronts {
					t.Errorf("back pods %v over %d connections: want one per calling front pod (%d)", back, e.ConnectionsOpened, fronts)
				}
			default:
				lo, hi := back[0], back[0]
				for _, n := range back {
					lo, hi = min(lo, n), max(hi, n)
				}
				if reached(back) != 3 || e.ConnectionsOpened != 3*fronts || float64(hi-lo) > 0.05*float64(hi) {
					t.Errorf("back pods %v over %d connections: want all 3 within 5 %%, a connection to each per calling front pod (%d)",
						back, e.ConnectionsOpened, fronts)
				}
			}
		})
	}
}
