package network

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"trafficlab/model/client"
	"trafficlab/model/netw"
	"trafficlab/scenario"
	"trafficlab/sim"
)

const ms = sim.Time(time.Millisecond)

// cluster is two ends on two nodes: pod 0 (service web) and client pod 0 (client c),
// with messages that log what reaches them.
type cluster struct {
	k   *sim.Kernel
	log []string
}

func (c *cluster) Name(x End) string {
	if x >= 0 {
		return fmt.Sprintf("web-%d", x)
	}
	return fmt.Sprintf("c-%d", -x-1)
}

func (c *cluster) Node(x End) int32 {
	if x >= 0 {
		return 1
	}
	return 0
}

func (c *cluster) Matches(s *scenario.Selector, x End) bool {
	return x >= 0 && s.Service == "web" || x < 0 && s.Client == "c"
}

func (c *cluster) NICs(int32) (out, in *netw.NIC) { return nil, nil }

func (c *cluster) note(format string, args ...any) {
	c.log = append(c.log, fmt.Sprintf("%v ", time.Duration(c.k.Now()))+fmt.Sprintf(format, args...))
}

func (c *cluster) Arrived(ji int32)           { c.note("arrived %d", ji) }
func (c *cluster) Answered(ji int32)          { c.note("answered %d", ji) }
func (c *cluster) Current(int32, uint32) bool { return true }
func (c *cluster) Lost(ji int32)              { c.note("lost %d", ji) }
func (c *cluster) Failed(id client.ConnID)    { c.note("failed %d", id) }

// newNetwork builds the network of a scenario's cluster.network and faults.
func newNetwork(t *testing.T, spec string) (*Network, *cluster, *[]uint32) {
	t.Helper()
	src := "apiVersion: trafficlab/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  duration: 10s\n" +
		"  cluster:\n    nodes: [{name: n, count: 2}]\n" + spec +
		"  services:\n  - name: web\n    replicas: 1\n    pod: {serviceTime: {distribution: constant, value: 1ms}}\n" +
		"  clients:\n  - name: c\n    target: web\n    rate: 1/s\n"
	sc, _, diags := scenario.Load("t.yaml", []byte(src), nil)
	if diags.HasErrors() {
		t.Fatalf("%v\n%s", diags, src)
	}
	k := sim.New()
	c := &cluster{k: k}
	seq := &[]uint32{0}
	n := New(k, Config{Seed: 1, Spec: &sc.Spec.Cluster.Network, Faults: sc.Spec.Faults, Seq: seq}, c)
	n.Start(c)
	return n, c, seq
}

// Each path is the cluster's network, with the link overrides and the faults active
// now that cover its direction (Chaos Mesh's "to": what the target sends), set again
// when a fault starts or ends.
func TestPathsFollowTheScenario(t *testing.T) {
	client, pod := ClientEnd(0), End(0)
	ge := &netw.GilbertElliott{P: 0.01, R: 0.25, BadLoss: 1}
	for _, tc := range []struct {
		name     string
		spec     string
		at       sim.Time // when the paths are looked at, after Reconfigure
		up, down sim.Time // latency client → pod, pod → client
		ge       *netw.GilbertElliott
	}{
		{name: "the cluster's network", spec: "    network: {latency: 1ms, gilbertElliott: {p: 1%, r: 25%}}\n",
			up: ms, down: ms, ge: ge},
		{name: "a link override, one way", spec: "    network: {latency: 1ms, links: [{target: {service: web}, direction: to, link: {latency: 5ms}}]}\n",
			up: ms, down: 5 * ms},
		{name: "before a delay fault", spec: "    network: {latency: 1ms}\n  faults: [{kind: delay, start: 2s, end: 4s, target: {service: web}, latency: 10ms}]\n",
			up: ms, down: ms},
		{name: "during a delay fault", spec: "    network: {latency: 1ms}\n  faults: [{kind: delay, start: 2s, end: 4s, target: {service: web}, latency: 10ms}]\n",
			at: 3000 * ms, up: ms, down: 11 * ms},
		{name: "after a delay fault", spec: "    network: {latency: 1ms}\n  faults: [{kind: delay, start: 2s, end: 4s, target: {service: web}, latency: 10ms}]\n",
			at: 5000 * ms, up: ms, down: ms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, _, _ := newNetwork(t, tc.spec)
			n.path(client, pod)
			n.path(pod, client)
			n.k.Run(tc.at)
			n.Reconfigure()
			up, down := n.path(client, pod), n.path(pod, client)
			if up.Latency != tc.up || down.Latency != tc.down {
				t.Errorf("latency up %v down %v, want %v and %v", up.Latency, down.Latency, tc.up, tc.down)
			}
			if (up.GilbertElliott == nil) != (tc.ge == nil) || tc.ge != nil && *up.GilbertElliott != *tc.ge {
				t.Errorf("Gilbert-Elliott %+v, want %+v", up.GilbertElliott, tc.ge)
			}
		})
	}
}

// A request crosses a lossless path 1.5 round trips after the SYN (it rides behind
// the handshake's ACK), its answer one trip later; closing the connection loses
// what it still carried, and TCP's record counts the connection.
func TestMessagesCrossAndCloseLoses(t *testing.T) {
	n, c, seq := newNetwork(t, "    network: {latency: 1ms, jitter: 0s}\n")
	n.Track(0)
	n.Open(0, ClientEnd(0), 0)
	n.Send(0, netw.Up, 100, 0, 7, 1)
	n.k.Run(4 * ms)
	n.Send(0, netw.Down, 200, 0, 7, 1)
	n.k.Run(10 * ms)
	n.Send(0, netw.Up, 100, 0, 8, 2)
	n.k.Run(10*ms + ms/2)
	(*seq)[0]++
	n.Close(0, 0)
	n.k.Run(20 * ms)
	want := []string{"3ms arrived 7", "5ms answered 7", "10.5ms lost 8"}
	if !slices.Equal(c.log, want) {
		t.Errorf("got %q, want %q", c.log, want)
	}
	if r := n.Result(); r.Connections != 1 || r.Segments == 0 {
		t.Errorf("tcp %+v: want one connection and its segments", r)
	}
}
