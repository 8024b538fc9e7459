package mesh

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"trafficlab/model/client"
	"trafficlab/model/node"
	"trafficlab/scenario"
	"trafficlab/sim"
)

const ms = sim.Time(time.Millisecond)

// rig is a bare kernel with one node of one core, apps that log what reaches them,
// and upstream pods whose answers to a connection the test chooses.
type rig struct {
	k     *sim.Kernel
	m     *Mesh
	cpu   *node.CPU
	log   []string
	eps   []int32
	reach map[int32]Reach
	pools []client.Pool
	conns client.Conns
	seq   []uint32
	child int32
	cfg   Config
}

func newRig() *rig {
	r := &rig{k: sim.New(), cpu: node.NewCPU(1), reach: map[int32]Reach{}, child: 100,
		cfg: Config{Seed: 1, Local: 50 * sim.Time(time.Microsecond), Hop: ms}}
	r.cfg.Tables = Tables{Pools: &r.pools, Conns: &r.conns, Seq: &r.seq}
	r.m = New(r.k, r.cfg, apps{r}, upstream{r})
	r.cpu.Changed = func(g *node.Group) {
		if at, ok := g.Next(); ok && !r.m.CPUChanged(g, at) {
			panic(fmt.Sprintf("group %d is not a sidecar's", g.ID))
		}
	}
	return r
}

func (r *rig) note(format string, args ...any) {
	r.log = append(r.log, time.Duration(r.k.Now()).String()+" "+fmt.Sprintf(format, args...))
}

// spec is a sidecar as the scenario defaults it, with these settings.
func spec(t *testing.T, settings string) *scenario.Sidecar {
	t.Helper()
	src := "apiVersion: trafficlab/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  duration: 10s\n" +
		"  cluster: {nodes: [{name: n, count: 1}]}\n  services:\n  - name: web\n    replicas: 1\n" +
		"    pod: {serviceTime: {distribution: constant, value: 1ms}}\n" +
		"  clients:\n  - name: c\n    target: web\n    rate: 1/s\n    sidecar: " + settings + "\n"
	sc, _, diags := scenario.Load("t.yaml", []byte(src), nil)
	if diags.HasErrors() {
		t.Fatalf("%v", diags)
	}
	return sc.Spec.Clients[0].Sidecar
}

type apps struct{ r *rig }

func (a apps) ToApp(ji int32, newConn bool) { a.r.note("app %d new=%v", ji, newConn) }
func (a apps) Closed(ji int32)              { a.r.note("closed %d", ji) }
func (a apps) Reply(ji int32)               { a.r.note("reply %d", ji) }
func (a apps) Answer(ji int32)              { a.r.note("answer %d", ji) }
func (a apps) Unavailable(ji, cause int32)  { a.r.note("503 %d cause %d", ji, cause); a.r.m.Free(ji) }
func (a apps) Free(ji int32)                { a.r.note("free %d", ji); a.r.m.Free(ji) }

type upstream struct{ r *rig }

func (u upstream) Endpoints(_, _ int32) []int32    { return u.r.eps }
func (u upstream) Reach(pod int32) Reach           { return u.r.reach[pod] }
func (u upstream) Wired(client.ConnID) bool        { return false }
func (u upstream) OnItsWay(int32, uint32) bool     { return true }
func (u upstream) ResetStream(int32, uint32)       {}
func (u upstream) GoAways(int32)                   {}
func (u upstream) ServerClosed(client.ConnID) bool { return false }
func (u upstream) Close(id client.ConnID)          { u.r.conns.Free(id) }

func (u upstream) NewPool(_, _ int32, _ bool) int32 {
	u.r.pools = append(u.r.pools, client.Pool{})
	return int32(len(u.r.pools) - 1)
}

func (u upstream) Dial(_, pod, pi int32) client.ConnID {
	id := u.r.conns.New(pod, pi, u.r.k.Now())
	for int(id) >= len(u.r.seq) {
		u.r.seq = append(u.r.seq, 0)
	}
	return id
}

func (u upstream) Send(req int32, gen uint32, id client.ConnID, newConn bool) (int32, uint32) {
	u.r.note("send %d to pod %d new=%v", req, u.r.conns.Get(id).Pod, newConn)
	u.r.child++
	return u.r.child, 1
}

func (u upstream) CPU(_, id int32, weight, _ float64, _ string) *node.Group {
	return u.r.cpu.AddGroup(id, weight, node.Quota{})
}

// An inbound envoy's one worker reads and routes its requests one at a time (1 ms
// each, half of 2 ms), opens a connection to the app for each while none is idle,
// relays an answer in a task of its own, and reuses the connection that answer
// freed.
func TestInboundWorkerTakesOneTaskAtATime(t *testing.T) {
	r := newRig()
	ei := r.m.Add(spec(t, "{concurrency: 1, perRequestCPU: 2ms}"), true, 0, 0, "web-0")
	for ji := int32(1); ji <= 3; ji++ {
		r.m.In(ei, ji, 0, ji == 1)
	}
	r.k.Run(4 * ms)
	r.m.AppAnswered(1) // at 4 ms: over loopback to the worker, then 1 ms to relay
	r.k.Run(7 * ms)
	r.m.In(ei, 4, 0, false)
	r.k.Run(10 * ms)
	want := []string{
		"1.15ms app 1 new=true", "2.15ms app 2 new=true", "3.15ms app 3 new=true",
		"5.05ms reply 1", "8.05ms app 4 new=false",
	}
	if !slices.Equal(r.log, want) {
		t.Errorf("got  %q\nwant %q", r.log, want)
	}
	got := r.m.Result(10*ms, func(int32) sim.Time { return -1 }, func(int32) string { return "n" })[0]
	if got.Requests != 4 || got.Direction != "inbound" || got.WorkerUtilization != 0.5 {
		t.Errorf("result %+v: want 4 requests inbound, the worker busy 5 of 10 ms", got)
	}
}

// An outbound envoy routes each request itself: it answers a 503 of its own when
// the service has no endpoints or its circuit breaker is full, retries a
// connect-failure on another pod when there is one, and gives up with a 503 blamed
// on the pod once the policy's retries (Istio's 2) are spent.
func TestOutboundRoutesRetriesAndRefuses(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings string
		eps      []int32
		reach    map[int32]Reach
		requests []int32
		want     []string // what reached the apps and the pods, in order
		retries  []int64  // the counts of retries the seed may give
		o, http  int64    // overflows and 503s
	}{
		{name: "no endpoints", settings: "{perRequestCPU: 0s}", requests: []int32{7},
			want: []string{"503 7 cause -1"}, retries: []int64{0}, http: 1},
		{name: "one pod refuses", settings: "{perRequestCPU: 0s}", eps: []int32{0}, reach: map[int32]Reach{0: Refuses},
			requests: []int32{7}, want: []string{"503 7 cause 0"}, retries: []int64{2}, http: 1},
		{name: "the retry avoids the refusing pod", settings: "{perRequestCPU: 0s}", eps: []int32{0, 1},
			reach: map[int32]Reach{0: Refuses}, requests: []int32{7}, want: []string{"send 7 to pod 1 new=true"}, retries: []int64{0, 1}},
		{name: "circuit breaker full", settings: "{perRequestCPU: 0s, circuitBreakers: {maxRequests: 1}}", eps: []int32{0},
			reach: map[int32]Reach{0: Silent}, requests: []int32{7, 8}, want: []string{"503 8 cause -1"}, retries: []int64{0}, o: 1, http: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig()
			r.eps = tc.eps
			for pod, how := range tc.reach {
				r.reach[pod] = how
			}
			ei := r.m.Add(spec(t, tc.settings), false, 0, 0, "c-0")
			for _, ji := range tc.requests {
				r.m.Accept(ei, client.ConnID(ji))
				r.m.Out(ei, ji, 1, 0, 0, client.ConnID(ji), true)
			}
			r.k.Run(sim.Time(time.Second))
			var got []string
			for _, l := range r.log {
				_, what, _ := strings.Cut(l, " ")
				got = append(got, what)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", r.log, tc.want)
			}
			res := r.m.Result(sim.Time(time.Second), nil, func(int32) string { return "n" })[0]
			if !slices.Contains(tc.retries, res.Retries) || res.Overflows != tc.o || res.HTTP503 != tc.http {
				t.Errorf("result %+v: want retries in %v, %d overflows, %d 503s", res, tc.retries, tc.o, tc.http)
			}
		})
	}
}
