package emulate

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"sync"
	"time"

	"trafficlab/emulate/clusterdns"
	"trafficlab/emulate/topo"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// dnsPod names the pod cluster DNS runs in, on the first node, as CoreDNS runs in
// pods of its own. Clients ask it straight, not through the kube-dns ClusterIP.
const dnsPod = "coredns"

// clusterDNS is the emulated cluster's DNS: its server (clusterdns) listens in a
// pod of its own, and learns of each change of the headless Services' ready pods
// as CoreDNS's EndpointSlice watch does: after the propagation delay
// (spec.cluster.endpointPropagation), in order, with no sync limit.
type clusterDNS struct {
	c   *cluster
	pod *topo.Pod
	srv *clusterdns.Server

	mu        sync.Mutex
	latest    map[string][]netip.Addr // ready pods by headless Service
	deliverAt time.Time
	spread    *rand.Rand
	timers    []*time.Timer
	stopped   bool
}

// anyHeadless tells whether the scenario has a headless Service.
func anyHeadless(sc *scenario.Scenario) bool {
	return slices.ContainsFunc(sc.Spec.Services, func(s scenario.Service) bool { return s.Headless() })
}

// DNSPod is where the plan's cluster DNS runs: its pod's name and node; ok is false
// without a headless Service, when it runs none.
func (p *Plan) DNSPod() (name, node string, ok bool) {
	if !anyHeadless(p.Scenario) {
		return "", "", false
	}
	return dnsPod, p.Layout.Nodes[0], true
}

// startDNS starts cluster DNS, knowing of no pod yet.
func startDNS(c *cluster) (*clusterDNS, error) {
	d := &clusterDNS{c: c, spread: sim.Stream(c.sc.Spec.Seed, "emulate/coredns-propagation")}
	var err error
	if d.pod, err = c.net.AddPod(dnsPod, c.layout.Nodes[0]); err != nil { // as Plan.DNSPod says
		return nil, err
	}
	addr, rng := d.addr(), sim.Stream(c.sc.Spec.Seed, "emulate/coredns-answers")
	if err := topo.InNetns(d.pod.NS, func() (err error) {
		// The sockets stay in the namespace they were made in.
		d.srv, err = clusterdns.Listen(addr, rng)
		return err
	}); err != nil {
		return nil, fmt.Errorf("cluster DNS on %s: %w", addr, err)
	}
	return d, nil
}

// settle has the server answer with pods' ready ones at once, as a settled
// cluster's DNS does when a run starts.
func (d *clusterDNS) settle(pods []podState) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.latest = readyHeadless(d.c.sc, pods)
	d.publish(d.latest)
}

// publish has the server answer each headless Service's name with its ready pods.
func (d *clusterDNS) publish(ready map[string][]netip.Addr) {
	for name, addrs := range ready {
		d.srv.Set(clusterdns.Name(name, "default"), addrs)
	}
}

// addr is where the server answers: its pod's address, port 53.
func (d *clusterDNS) addr() string { return netip.AddrPortFrom(d.pod.IP, 53).String() }

// changed sends the headless Services' ready pods on their way to the server, when
// they changed.
func (d *clusterDNS) changed(pods []podState) {
	ready := readyHeadless(d.c.sc, pods)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped || equalReady(ready, d.latest) {
		return
	}
	d.latest = ready
	prop := &d.c.sc.Spec.Cluster.EndpointPropagation
	at := time.Now().Add(prop.Latency.Duration)
	if j := prop.Jitter.Duration; j > 0 {
		at = at.Add(time.Duration(d.spread.Int64N(int64(j) + 1)))
	}
	if at.Before(d.deliverAt) {
		at = d.deliverAt // a watch delivers in order
	}
	d.deliverAt = at
	d.timers = append(d.timers, time.AfterFunc(time.Until(at), func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if !d.stopped {
			d.publish(ready)
		}
	}))
}

// stop ends the deliveries to come and the server.
func (d *clusterDNS) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return
	}
	d.stopped = true
	for _, t := range d.timers {
		t.Stop()
	}
	d.srv.Close()
}

// readyHeadless is each headless Service's ready pods, in the order the pods were
// made: what CoreDNS answers before its shuffle (plugin/kubernetes drops endpoints
// that are not ready).
func readyHeadless(sc *scenario.Scenario, pods []podState) map[string][]netip.Addr {
	out := map[string][]netip.Addr{}
	for _, s := range sc.Spec.Services {
		if !s.Headless() {
			continue
		}
		out[s.Name] = nil
		for _, p := range pods {
			if p.service == s.Name && p.ready && !p.terminating {
				out[s.Name] = append(out[s.Name], p.addr.Addr())
			}
		}
	}
	return out
}

func equalReady(a, b map[string][]netip.Addr) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// headlessTarget is the URL a client of headless service reaches it by: its name,
// which cluster DNS resolves to pods, and the pods' own port, as no Service port
// maps it.
func headlessTarget(service string) string {
	return fmt.Sprintf("http://%s:%d/", clusterdns.Name(service, "default"), podPort)
}
