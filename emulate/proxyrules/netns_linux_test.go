//go:build linux

package proxyrules

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"trafficlab/emulate/emutest"

	"golang.org/x/sys/unix"
)

// The real test: kube-proxy's rules, applied by Apply in a network namespace of the
// test's own, balance real TCP connections from real sockets.
//
// Layout inside the namespace (a.b is a /16 the host does not use):
//
//	lo                      up
//	tl-pods (veth)          a.b.0.1 (the client's source), a.b.1.1-3 (three "pods")
//	tl-peer (its peer)      up, no address
//	route a.b.255.0/24      dev tl-pods src a.b.0.1: the Service range
//	web   a.b.255.10:80 ->  a.b.1.{1,2,3}:8080
//	empty a.b.255.11:80     no endpoints
//
// The kernel here has no dummy interfaces, so the pod addresses sit on one end of a
// veth pair whose both ends stay in the namespace. The HTTP servers and the client run
// in this test process: a goroutine locks its OS thread, setns(2)s it into the
// namespace and creates the socket there; the thread is never switched back but ends
// with the goroutine. A socket stays in the namespace it was made in, so serving and
// reading happen on any thread. That keeps every server and every connection under the
// test's own control and count, with no helper processes to leave behind.
//
// Locally generated connections go through the nat OUTPUT hook, where kube-proxy's
// rules send them to KUBE-SERVICES (iptables) or the services chain (nftables), as on a
// node.

const (
	newConnRequests   = 300 // one new connection each
	keepAliveRequests = 100 // all on one connection
	podPort           = 8080
)

func TestRulesInNetns(t *testing.T) {
	emutest.NeedRoot(t, "ip", "nft", "iptables", "iptables-save", "iptables-restore")
	block := unusedBlock(t)
	for _, mode := range []Mode{Iptables, Nftables} {
		t.Run(mode.String(), func(t *testing.T) { testMode(t, mode, block) })
	}
}

// unusedBlock returns the first candidate /16 that overlaps no address or route of the
// host, so that nothing the test does can be mistaken for the host's traffic.
func unusedBlock(t *testing.T) netip.Prefix {
	t.Helper()
	var used []netip.Prefix
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			used = append(used, p.Masked())
		}
	}
	out, err := exec.Command("ip", "-4", "route", "show", "table", "all").Output()
	if err != nil {
		t.Fatalf("ip route: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) > 1 && (f[0] == "local" || f[0] == "broadcast" || f[0] == "unicast" || f[0] == "multicast" || f[0] == "anycast" || f[0] == "blackhole" || f[0] == "unreachable" || f[0] == "prohibit") {
			f = f[1:]
		}
		if len(f) == 0 || f[0] == "default" {
			continue
		}
		dst := f[0]
		if !strings.Contains(dst, "/") {
			dst += "/32"
		}
		if p, err := netip.ParsePrefix(dst); err == nil {
			used = append(used, p)
		}
	}
	for _, c := range []string{"10.233.0.0/16", "10.234.0.0/16", "10.235.0.0/16", "172.29.0.0/16"} {
		cand := netip.MustParsePrefix(c)
		free := true
		for _, u := range used {
			if u.Overlaps(cand) {
				free = false
			}
		}
		if free {
			return cand
		}
	}
	t.Fatalf("every candidate range is in use on this host: %v", used)
	return netip.Prefix{}
}

func blockAddr(block netip.Prefix, c, d byte) netip.Addr {
	a := block.Addr().As4()
	return netip.AddrFrom4([4]byte{a[0], a[1], c, d})
}

// modeRun is one mode's test network: a namespace with a client address and three
// pods, a Service web over them and one without endpoints, and the rules of both.
type modeRun struct {
	ctx            context.Context
	mode           Mode
	ns             *testNetns
	pods           []*testPod
	byName         map[string]int
	podIPs         []netip.Addr
	webIP, emptyIP netip.Addr
	web, empty     Service
	rules          Rules
	webURL         string
	fresh, kept    *http.Client // a new connection per request; one kept alive
}

// newModeRun builds the network in addresses of block and applies the rules twice:
// a second full sync over the first changes nothing (no duplicated jump rules).
func newModeRun(ctx context.Context, t *testing.T, mode Mode, block netip.Prefix) *modeRun {
	client := blockAddr(block, 0, 1)
	podIPs := []netip.Addr{blockAddr(block, 1, 1), blockAddr(block, 1, 2), blockAddr(block, 1, 3)}
	webIP, emptyIP := blockAddr(block, 255, 10), blockAddr(block, 255, 11)
	serviceRange := netip.PrefixFrom(blockAddr(block, 255, 0), 24)

	ns := newTestNetns(t, fmt.Sprintf("tltest-rules-%d-%s", os.Getpid(), mode))
	ns.ip(t, "link", "set", "lo", "up")
	ns.ip(t, "link", "add", "tl-pods", "type", "veth", "peer", "name", "tl-peer")
	ns.ip(t, "addr", "add", client.String()+"/32", "dev", "tl-pods") // first: the primary address
	for _, p := range podIPs {
		ns.ip(t, "addr", "add", p.String()+"/32", "dev", "tl-pods")
	}
	ns.ip(t, "link", "set", "tl-pods", "up")
	ns.ip(t, "link", "set", "tl-peer", "up")
	ns.ip(t, "route", "add", serviceRange.String(), "dev", "tl-pods", "src", client.String())

	pods := make([]*testPod, len(podIPs))
	for i, ip := range podIPs {
		pods[i] = ns.startPod(t, fmt.Sprintf("web-%d", i), netip.AddrPortFrom(ip, podPort))
	}
	byName := map[string]int{}
	for i, p := range pods {
		byName[p.name] = i
	}

	web := Service{Name: "web", ClusterIP: webIP, Port: 80, Endpoints: EndpointsAt(podPort, podIPs...)}
	empty := Service{Name: "empty", ClusterIP: emptyIP, Port: 80}
	rules := Rules{Config: Config{Prefix: ns.name, NodeIP: client}, Services: []Service{web, empty}}
	if err := Apply(ctx, ns.name, mode, rules); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if err := Apply(ctx, ns.name, mode, rules); err != nil {
		t.Fatalf("Apply again: %v", err)
	}
	if mode == Iptables {
		save := ns.exec(t, "iptables-save")
		if n := strings.Count(save, "-j KUBE-SERVICES"); n != 4 { // nat OUTPUT, PREROUTING; filter OUTPUT, FORWARD
			t.Errorf("after two syncs: %d jumps to KUBE-SERVICES, want 4:\n%s", n, save)
		}
	}
	webURL := "http://" + netip.AddrPortFrom(webIP, 80).String() + "/"
	m := &modeRun{ctx: ctx, mode: mode, ns: ns, pods: pods, byName: byName, podIPs: podIPs, webIP: webIP, emptyIP: emptyIP,
		web: web, empty: empty, rules: rules, webURL: webURL, fresh: ns.httpClient(false), kept: ns.httpClient(true)}
	t.Cleanup(m.fresh.CloseIdleConnections)
	t.Cleanup(m.kept.CloseIdleConnections)
	return m
}

func testMode(t *testing.T, mode Mode, block netip.Prefix) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	m := newModeRun(ctx, t, mode, block)
	m.newConnections(t)
	first := m.keepAlive(t)
	m.noEndpoints(t)
	m.endpointGone(t, first)
	m.flush(t)
}

// 1. A new connection per request: each is balanced on its own. With n = 300 and
// p = 1/3 a pod's count is binomial, mean 100, σ = √(n·p·(1−p)) ≈ 8.16; each must be
// within ±4σ (a false alarm about once in 5,000 runs of both modes).
func (m *modeRun) newConnections(t *testing.T) {
	before := connCounts(m.pods)
	counts := make([]int, len(m.pods))
	for i := range newConnRequests {
		name, err := get(m.ctx, m.fresh, m.webURL)
		if err != nil {
			t.Fatalf("new-connection request %d: %v", i, err)
		}
		counts[m.byName[name]]++
	}
	m.fresh.CloseIdleConnections()
	const n, p = float64(newConnRequests), 1.0 / 3
	mean, sigma := n*p, math.Sqrt(n*p*(1-p))
	t.Logf("%s: %d requests, a new connection each: per-pod counts %v (expect %.0f ± %.1f, 4σ = %.1f)", m.mode, newConnRequests, counts, mean, sigma, 4*sigma)
	for i, c := range counts {
		if math.Abs(float64(c)-mean) > 4*sigma {
			t.Errorf("pod %s got %d of %d new connections, outside %.0f ± 4σ (%.1f)", m.pods[i].name, c, newConnRequests, mean, 4*sigma)
		}
	}
	after := connCounts(m.pods)
	for i := range m.pods {
		if got := after[i] - before[i]; got != int64(counts[i]) {
			t.Errorf("pod %s: %d requests but %d new connections; every request should have had its own", m.pods[i].name, counts[i], got)
		}
	}
}

// 2. One reused keep-alive connection: conntrack pins it to the pod of its first
// packet, for all 100 requests.
func (m *modeRun) keepAlive(t *testing.T) string {
	before := connCounts(m.pods)
	first := ""
	for i := range keepAliveRequests {
		name, err := get(m.ctx, m.kept, m.webURL)
		if err != nil {
			t.Fatalf("keep-alive request %d: %v", i, err)
		}
		if first == "" {
			first = name
		} else if name != first {
			t.Fatalf("keep-alive request %d went to %s, earlier ones to %s", i, name, first)
		}
	}
	if d := sum(connCounts(m.pods)) - sum(before); d != 1 {
		t.Errorf("%d keep-alive requests opened %d connections, want 1", keepAliveRequests, d)
	}
	t.Logf("%s: %d requests on one keep-alive connection: all on %s", m.mode, keepAliveRequests, first)
	return first
}

// 3. A Service without endpoints is refused at once: REJECT answers the SYN with
// ICMP port unreachable, which connect(2) reports as ECONNREFUSED.
func (m *modeRun) noEndpoints(t *testing.T) {
	start := time.Now()
	dctx, dcancel := context.WithTimeout(m.ctx, 5*time.Second)
	c, err := m.ns.DialContext(dctx, "tcp", netip.AddrPortFrom(m.emptyIP, 80).String())
	dcancel()
	if err == nil {
		c.Close()
		t.Fatal("connected to a Service without endpoints")
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("Service without endpoints: %v, want connection refused", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("refusal took %v; a REJECT should be immediate", el)
	}
	t.Logf("%s: Service without endpoints refused after %v", m.mode, time.Since(start).Round(time.Microsecond))
}

// 4. An endpoint goes away: a full resync without it. New connections avoid it at
// once; the established keep-alive connection keeps going to it, because conntrack
// entries of TCP are left alone, as kube-proxy leaves them.
func (m *modeRun) endpointGone(t *testing.T, first string) {
	gone := m.byName[first]
	remaining := make([]netip.Addr, 0, 2)
	for i, ip := range m.podIPs {
		if i != gone {
			remaining = append(remaining, ip)
		}
	}
	resync := m.rules
	resync.Services = []Service{{Name: "web", ClusterIP: m.webIP, Port: 80, Endpoints: EndpointsAt(podPort, remaining...)}, m.empty}
	if err := Apply(m.ctx, m.ns.name, m.mode, resync); err != nil {
		t.Fatalf("Apply without %s: %v", first, err)
	}
	seen := map[string]int{}
	for i := range 60 {
		name, err := get(m.ctx, m.fresh, m.webURL)
		if err != nil {
			t.Fatalf("request %d after the resync: %v", i, err)
		}
		seen[name]++
	}
	m.fresh.CloseIdleConnections()
	if seen[first] > 0 || len(seen) != 2 {
		t.Errorf("after removing %s, 60 new connections went to %v; want both remaining pods and not %s", first, seen, first)
	}
	before := connCounts(m.pods)
	for i := range 20 {
		name, err := get(m.ctx, m.kept, m.webURL)
		if err != nil {
			t.Fatalf("keep-alive request %d after the resync: %v", i, err)
		}
		if name != first {
			t.Fatalf("the established connection moved from %s to %s; conntrack should pin it", first, name)
		}
	}
	if d := sum(connCounts(m.pods)) - sum(before); d != 0 {
		t.Errorf("the established connection was replaced (%d new connections)", d)
	}
	m.kept.CloseIdleConnections()
	t.Logf("%s: after removing %s: new connections %v; the established connection stayed on %s", m.mode, first, seen, first)
	m.staleChain(t, gone, resync)
}

// The removed endpoint's chain: iptables deletes it in the same restore; nftables
// flushes it and deletes it at the next sync.
func (m *modeRun) staleChain(t *testing.T, gone int, resync Rules) {
	sp, _ := m.web.normalize()
	goneEP := netip.AddrPortFrom(m.podIPs[gone], podPort)
	switch m.mode {
	case Iptables:
		if save := m.ns.exec(t, "iptables-save", "-t", "nat"); strings.Contains(save, iptablesEndpointChain(sp, goneEP)) {
			t.Errorf("stale chain %s still there:\n%s", iptablesEndpointChain(sp, goneEP), save)
		}
	case Nftables:
		chain := nftablesEndpointChain(sp, goneEP)
		counts, _, err := nftablesChains(m.ctx, m.ns.name)
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := counts[chain]; !ok || n != 0 {
			t.Errorf("stale chain %s: present %v with %d rules, want present and flushed", chain, ok, n)
		}
		if err := Apply(m.ctx, m.ns.name, m.mode, resync); err != nil {
			t.Fatal(err)
		}
		counts, _, err = nftablesChains(m.ctx, m.ns.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := counts[chain]; ok {
			t.Errorf("stale chain %s not deleted by the next sync", chain)
		}
	}
}

// 5. Flush leaves nothing of the rules behind.
func (m *modeRun) flush(t *testing.T) {
	if err := Flush(m.ctx, m.ns.name, m.mode); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if err := Flush(m.ctx, m.ns.name, m.mode); err != nil {
		t.Fatalf("Flush of a flushed namespace: %v", err)
	}
	if save := m.ns.exec(t, "iptables-save"); strings.Contains(save, "KUBE-") {
		t.Errorf("KUBE- rules left after Flush:\n%s", save)
	}
	if tables := m.ns.exec(t, "nft", "list", "tables"); strings.Contains(tables, nftablesTable) {
		t.Errorf("table %s left after Flush:\n%s", nftablesTable, tables)
	}
}

func get(ctx context.Context, c *http.Client, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %s", resp.Status)
	}
	return string(body), nil
}

func connCounts(pods []*testPod) []int64 {
	out := make([]int64, len(pods))
	for i, p := range pods {
		out[i] = p.conns.Load()
	}
	return out
}

func sum(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return s
}

// testNetns is a network namespace the test made with `ip netns add`.
type testNetns struct {
	name string
	path string
}

// newTestNetns creates the namespace and registers its removal, and a check that it is
// gone, to run however the test ends.
func newTestNetns(t *testing.T, name string) *testNetns {
	t.Helper()
	ns := &testNetns{name: name, path: "/var/run/netns/" + name}
	if _, err := os.Stat(ns.path); err == nil {
		// A leftover of a crashed run of this test with the same PID.
		_ = exec.Command("ip", "netns", "del", name).Run()
	}
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", name, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", name, err, out)
		}
		if _, err := os.Stat(ns.path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("namespace %s still there after the test (%v)", name, err)
		}
		if out, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(out), name) {
			t.Errorf("ip netns list still shows %s:\n%s", name, out)
		}
	})
	return ns
}

// ip runs `ip -n NAME args...`.
func (ns *testNetns) ip(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", append([]string{"-n", ns.name}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("ip -n %s %s: %v: %s", ns.name, strings.Join(args, " "), err, out)
	}
}

// exec runs a command inside the namespace and returns its output.
func (ns *testNetns) exec(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := run(ctx, ns.name, nil, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// do runs fn on an OS thread that has entered the namespace. The thread is locked and
// never unlocked, so the runtime ends it with the goroutine and no other goroutine ever
// runs in the namespace by accident.
func (ns *testNetns) do(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		fd, err := unix.Open(ns.path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		err = unix.Setns(fd, unix.CLONE_NEWNET)
		unix.Close(fd)
		if err != nil {
			errc <- fmt.Errorf("setns %s: %w", ns.name, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// DialContext dials from inside the namespace.
func (ns *testNetns) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := ns.do(func() error {
		var err error
		c, err = (&net.Dialer{}).DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// httpClient returns a client whose connections start inside the namespace: one
// connection per request, or keep-alive on at most one idle connection.
func (ns *testNetns) httpClient(keepAlive bool) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext:         ns.DialContext,
		DisableKeepAlives:   !keepAlive,
		MaxIdleConnsPerHost: 1,
		MaxConnsPerHost:     1,
		Proxy:               nil,
	}}
}

// testPod is an HTTP server in the namespace that answers with its name.
type testPod struct {
	name  string
	conns atomic.Int64 // connections accepted
}

func (ns *testNetns) startPod(t *testing.T, name string, addr netip.AddrPort) *testPod {
	t.Helper()
	var ln net.Listener
	if err := ns.do(func() error {
		var err error
		ln, err = net.Listen("tcp4", addr.String())
		return err
	}); err != nil {
		t.Fatalf("listen %s in %s: %v", addr, ns.name, err)
	}
	p := &testPod{name: name}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("X-Pod", name)
			io.WriteString(w, name)
		}),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				p.conns.Add(1)
			}
		},
		ReadHeaderTimeout: 5 * time.Second,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ln)
	}()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return p
}
