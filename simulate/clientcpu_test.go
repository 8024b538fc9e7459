package simulate

import (
	"math"
	"os"
	"testing"
	"trafficlab/result"
)

// clientCPUScenario is testdata/client-cpu.yaml: one client pod alone on a 4-core
// node, five pods of a service on another.
var clientCPUScenario = mustRead("testdata/client-cpu.yaml")

func mustRead(name string) string {
	b, err := os.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestClientCPUOpenLoop: an open loop needs rate × per-request CPU; under a limit
// smaller than that it sends limit ÷ per-request CPU a second and falls behind on
// the rest, which it never sends.
func TestClientCPUOpenLoop(t *testing.T) {
	const rate, work, secs = 10000.0, 100e-6, 10.0 // needs 1 core
	cases := []struct {
		name  string
		sets  []string
		cores float64 // what it may use; the rate needs rate·work
	}{
		{"no limit: a core of four", nil, 4},
		{"limit 2: room to spare", []string{"spec.clients[0].resources.limits.cpu=2"}, 2},
		{"limit 0.5: half of what it needs", []string{"spec.clients[0].resources.limits.cpu=500m"}, 0.5},
		{"limit 0.25", []string{"spec.clients[0].resources.limits.cpu=250m"}, 0.25},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runYAML(t, clientCPUScenario, tc.sets...)
			c := r.Clients[0]
			due := int64(rate * secs)
			can := tc.cores / work * secs // requests its CPU can prepare in the run
			if can >= float64(due) {
				if c.Behind != 0 || c.Sent != due {
					t.Fatalf("sent %d, behind %d; want all %d sent", c.Sent, c.Behind, due)
				}
				if want := rate * work; math.Abs(c.CPUCores-want) > 1e-3 {
					t.Errorf("cpu %.4f cores, want %.4f", c.CPUCores, want)
				}
				return
			}
			// A CFS quota starts full: the run's first partial period adds at most
			// one period's quota (100 ms) to limit·duration, and each of the
			// ceil(limit) threads may hold one request unfinished at the end.
			slack := tc.cores*0.1/work + math.Ceil(tc.cores)
			if math.Abs(float64(c.Sent)-can) > slack {
				t.Errorf("sent %d, want %.0f ± %.0f", c.Sent, can, slack)
			}
			if c.Sent+c.Behind != due && c.Sent+c.Behind != due-1 {
				// The arrival due exactly at the end is not part of the run.
				t.Errorf("sent %d + behind %d, want %d due", c.Sent, c.Behind, due)
			}
			if r.Requests.Behind != c.Behind {
				t.Errorf("requests behind %d, client %d", r.Requests.Behind, c.Behind)
			}
			// The backlog grows at rate − capacity, so the last sent waited most.
			wantLate := secs * (1 - (tc.cores/work)/rate)
			if math.Abs(c.MaxLateS-wantLate) > 0.1+0.01*wantLate {
				t.Errorf("max late %.3f s, want about %.3f", c.MaxLateS, wantLate)
			}
			// Latency counts from when a request fell due, the wait included; the
			// timeout from when it was made, so none timed out.
			if r.LatencyMS.Max < c.MaxLateS*1e3 || r.Errors.Timeout != 0 {
				t.Errorf("latency max %.1f ms, %d timeouts; want at least the %.1f ms late and none", r.LatencyMS.Max, r.Errors.Timeout, c.MaxLateS*1e3)
			}
		})
	}
}

// TestClientCPUClosedLoop: one thread's cycle is its CPU plus the round trip, so
// its pod uses work ÷ cycle of a core; a new connection per request adds its setup
// to both.
func TestClientCPUClosedLoop(t *testing.T) {
	const rtt, svc = 200e-6, 200e-6
	cases := []struct {
		name        string
		sets        []string
		work, setup float64
		handshake   float64 // a new connection's extra round trip before the request
	}{
		{"kept connection", []string{"spec.clients[0].work.perRequest=300us"}, 300e-6, 0, 0},
		{"a connection per request", []string{"spec.clients[0].work.perRequest=300us",
			"spec.clients[0].work.perConnection=100us", "spec.clients[0].connections.reuse=none"}, 300e-6, 100e-6, rtt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sets := append([]string{"spec.clients[0].rate=null", "spec.clients[0].threads=1"}, tc.sets...)
			r := runYAML(t, clientCPUScenario, sets...)
			c := r.Clients[0]
			cycle := tc.work + tc.setup + rtt + svc + tc.handshake
			wantRPS := 1 / cycle
			if got := r.ThroughputRPS; math.Abs(got-wantRPS)/wantRPS > 0.002 {
				t.Errorf("throughput %.1f/s, want %.1f", got, wantRPS)
			}
			if want := (tc.work + tc.setup) / cycle; math.Abs(c.CPUCores-want) > 1e-3 {
				t.Errorf("cpu %.4f cores, want %.4f", c.CPUCores, want)
			}
			if want := (tc.work + tc.setup) * 1e3; math.Abs(c.CPUPerRequestMS-want) > 1e-6 {
				t.Errorf("cpu per request %.6f ms, want %.6f", c.CPUPerRequestMS, want)
			}
			if n := r.Nodes[0]; n.ClientCPUCores != c.CPUCores {
				t.Errorf("node %s client cpu %.4f, client %.4f", n.Name, n.ClientCPUCores, c.CPUCores)
			}
		})
	}
}

// TestClientCPUSharesItsNode: a client without a limit on a node whose other
// container burns a core gets what the node has left (max-min fair shares), and
// with it the rate it can send.
func TestClientCPUSharesItsNode(t *testing.T) {
	src := clientCPUScenario + `
  background:
  - {name: hog, node: load-0, cpu: "4"}
`
	// The node's 4 cores go half to the hog and half to the client (equal weights,
	// both asking for more than half): 2 cores, 20,000 requests a second.
	r := runYAML(t, src, "spec.clients[0].rate=30000/s")
	c := r.Clients[0]
	want := 2 / 100e-6 * 10
	if math.Abs(float64(c.Sent)-want) > 4 {
		t.Errorf("sent %d, want %.0f", c.Sent, want)
	}
	if c.Behind == 0 {
		t.Errorf("not behind at 30,000/s with room for 20,000")
	}
}

// TestNodeCPUAddsUp: every core-second a node reports was spent by one of its
// containers, each reported on that node: service pods, sidecars (the client's on
// the client's node, the servers' on theirs), client pods and kube-proxy.
func TestNodeCPUAddsUp(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    func(t *testing.T) (nodes []result.Node, parts map[string]float64)
	}{
		{"sidecars both sides (r5)", func(t *testing.T) ([]result.Node, map[string]float64) {
			r := runExample(t, "r5-sidecar-concurrency.yaml", "spec.duration=5s", "spec.clients[0].work.perRequest=20us").Result()
			return r.Nodes, cpuByNode(r)
		}},
		{"userspace relay and client work", func(t *testing.T) ([]result.Node, map[string]float64) {
			r := runYAML(t, clientCPUScenario, "spec.cluster.proxyMode=userspace", "spec.clients[0].entryNode=worker-0",
				"spec.clients[0].connections.reuse=none", "spec.clients[0].rate=2000/s")
			return r.Nodes, cpuByNode(r)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes, parts := tc.r(t)
			for _, n := range nodes {
				got := n.CPUUtilization * n.CPU
				if math.Abs(got-parts[n.Name]) > 2e-3 {
					t.Errorf("node %s: %.4f cores used, its containers %.4f", n.Name, got, parts[n.Name])
				}
			}
			if len(parts) < 2 {
				t.Errorf("the CPU landed on %d nodes, want the client's and the servers'", len(parts))
			}
		})
	}
}

// cpuByNode sums each node's containers' cores as the result reports them, for a
// run whose pods all lived the whole run.
func cpuByNode(r *result.Result) map[string]float64 {
	out := map[string]float64{}
	for _, p := range r.Pods {
		out[p.Node] += p.CPUCores
	}
	for _, s := range r.Sidecars {
		out[s.Node] += s.CPUCores
	}
	for _, c := range r.Clients {
		for _, p := range c.Pods {
			out[p.Node] += p.CPUCores
		}
	}
	for _, n := range r.Nodes {
		if n.ProxyCPUCores > 0 {
			out[n.Name] += n.ProxyCPUCores
		}
	}
	return out
}

// TestCallCPUIsThePods: the CPU a service's app spends on its calls runs on its
// own container: its pods' CPU per request grows by the calls' work, and no client
// pod is charged for it.
func TestCallCPUIsThePods(t *testing.T) {
	const src = `
apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: call-cpu}
spec:
  duration: 10s
  cluster:
    nodes: [{name: worker, count: 2, cpu: "4"}]
    network: {latency: 100us}
  services:
  - name: front
    replicas: 1
    pod:
      serviceTime: {distribution: constant, value: 100us}
      calls: [{service: back, count: 2}]
      client: {library: go-net-http, work: {perRequest: 300us, perConnection: 0s}}
  - name: back
    replicas: 2
    pod:
      serviceTime: {distribution: constant, value: 100us}
  clients:
  - name: load
    target: front
    threads: 1
    work: {perRequest: 0s, perConnection: 0s}
`
	for _, tc := range []struct {
		name string
		sets []string
		work float64 // the front's CPU per request on its calls
	}{
		{"no call work", []string{"spec.services[0].pod.client.work.perRequest=0s"}, 0},
		{"300 µs a call", nil, 2 * 300e-6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runYAML(t, src, tc.sets...)
			var front result.Pod
			for _, p := range r.Pods {
				if p.Service == "front" {
					front = p
				}
			}
			perReq := front.CPUCores * r.DurationS / float64(front.Requests)
			if want := 100e-6 + tc.work; math.Abs(perReq-want) > 2e-6 {
				t.Errorf("front's CPU a request %.1f µs, want %.1f", perReq*1e6, want*1e6)
			}
			if c := r.Clients[0]; c.CPUCores != 0 || len(c.Pods) != 0 {
				t.Errorf("the client was charged %v cores for the front's calls", c.CPUCores)
			}
			for _, n := range r.Nodes {
				if n.ClientCPUCores != 0 {
					t.Errorf("node %s has %v client cores", n.Name, n.ClientCPUCores)
				}
			}
		})
	}
}

// TestClientCPUUnderPressure: what a client's own CPU does when it runs short, on
// the paths review found wrong. A thread never builds two requests at once (its
// timeout fails it once the work is done), an open loop's overhead holds its
// sender, an HTTP/2 pool shares one connection however long its setup takes,
// connection work alone makes an open loop fall behind, and a request a client gave
// up on while the userspace proxy copied it leaves no job behind.
func TestClientCPUUnderPressure(t *testing.T) {
	const limited = "spec.clients[0].resources.limits.cpu=250m"
	for _, tc := range []struct {
		name  string
		sets  []string
		check func(t *testing.T, e *Engine, r *result.Result)
	}{
		{"a timed-out thread finishes its work first", []string{limited, "spec.clients[0].rate=null", "spec.clients[0].threads=4",
			"spec.clients[0].work.perRequest=1ms", "spec.clients[0].timeout=3ms"},
			func(t *testing.T, e *Engine, r *result.Result) {
				if n := len(e.cpuTasks.items); n > 4 {
					t.Errorf("%d pieces of work at once for 4 threads", n)
				}
				if r.Errors.Timeout == 0 {
					t.Errorf("no timeouts: the case does not test them")
				}
			}},
		{"overhead holds the sender", []string{limited, "spec.clients[0].rate=5000/s", "spec.clients[0].overhead=1ms"},
			func(t *testing.T, e *Engine, r *result.Result) {
				if c := r.Clients[0]; r.Errors.Timeout != 0 || r.Requests.InFlight > 1 || c.Behind == 0 {
					t.Errorf("%d timeouts, %d in flight, %d behind: want none, at most 1 and some", r.Errors.Timeout, r.Requests.InFlight, c.Behind)
				}
			}},
		{"HTTP/2 shares one connection", []string{"spec.clients[0].rate=null", "spec.clients[0].threads=8",
			"spec.clients[0].connections.protocol=http2", "spec.clients[0].work.perConnection=300us"},
			func(t *testing.T, e *Engine, r *result.Result) {
				if n := r.Clients[0].ConnectionsOpened; n != 1 {
					t.Errorf("%d connections opened, want 1", n)
				}
			}},
		{"connection work alone falls behind", []string{limited, "spec.clients[0].work.perRequest=0s",
			"spec.clients[0].work.perConnection=100us", "spec.clients[0].connections.reuse=none", "spec.clients[0].rate=5000/s"},
			func(t *testing.T, e *Engine, r *result.Result) {
				if c := r.Clients[0]; c.Behind == 0 || r.Errors.Timeout != 0 {
					t.Errorf("behind %d, %d timeouts: want some and none", c.Behind, r.Errors.Timeout)
				}
			}},
		{"a given-up request leaves the proxy", []string{"spec.cluster.proxyMode=userspace", "spec.cluster.proxyWork.perRequest=400us",
			"spec.clients[0].timeout=5ms", "spec.clients[0].rate=4000/s", "spec.clients[0].connections.reuse=none"},
			func(t *testing.T, e *Engine, r *result.Result) {
				wire := 0
				for _, j := range e.jobs {
					if j.state == jobWire {
						wire++
					}
				}
				if int64(wire) > r.Requests.InFlight {
					t.Errorf("%d requests on their way to a pod, %d in flight", wire, r.Requests.InFlight)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := buildYAML(t, clientCPUScenario, append([]string{"spec.duration=3s"}, tc.sets...)...)
			e.Run(nil)
			tc.check(t, e, e.Result())
		})
	}
}
