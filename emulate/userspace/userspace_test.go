package userspace

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"trafficlab/emulate/emutest"
	"trafficlab/emulate/load"
	"trafficlab/emulate/serve"
	"trafficlab/emulate/topo"
	"trafficlab/scenario"
)

// echoBackend answers each connection with its name and a newline, then closes.
func echoBackend(t *testing.T, name string) (netip.AddrPort, net.Listener) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintln(c, name)
			c.Close()
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String()), ln
}

// loopbackProxy is the proxy without a namespace or rules: clients connect to its
// listener directly.
func loopbackProxy(t *testing.T) *Proxy {
	t.Helper()
	var nd net.Dialer
	p, err := start(Config{Services: []Service{{Name: "web", ClusterIP: netip.MustParseAddr("198.19.0.1"), Port: 80}}, Seed: 1},
		func(ctx context.Context, addr string) (net.Conn, error) { return nd.DialContext(ctx, "tcp", addr) },
		func() (net.Listener, error) { return net.Listen("tcp4", "127.0.0.1:0") })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func ask(t *testing.T, p *Proxy) (string, error) {
	t.Helper()
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p.ListenPort("web")), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), err
}

// TestRoundRobinAndRetryLoopback: round robin spreads exactly, a refused endpoint is
// retried on the next one, and with no endpoints the client's connection is accepted
// and closed (EOF).
func TestRoundRobinAndRetryLoopback(t *testing.T) {
	p := loopbackProxy(t)
	var eps []netip.AddrPort
	var lns []net.Listener
	for i := range 3 {
		ep, ln := echoBackend(t, fmt.Sprintf("b%d", i))
		eps = append(eps, ep)
		lns = append(lns, ln)
	}
	if err := p.SetEndpoints("web", eps); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for range 30 {
		name, err := ask(t, p)
		if err != nil {
			t.Fatal(err)
		}
		count[name]++
	}
	if len(count) != 3 || count["b0"] != 10 || count["b1"] != 10 || count["b2"] != 10 {
		t.Errorf("30 connections: %v, want 10 each", count)
	}
	lns[1].Close() // refused from now on, still listed
	clear(count)
	for range 20 {
		name, err := ask(t, p)
		if err != nil {
			t.Fatalf("with a dead endpoint: %v", err)
		}
		count[name]++
	}
	if count["b0"] != 10 || count["b2"] != 10 {
		t.Errorf("20 connections with b1 dead: %v, want 10 each on b0 and b2", count)
	}
	if st := p.Stats("web"); st.DialFailures < 9 || st.DialFailures > 10 || st.Proxied != 50 {
		t.Errorf("stats %+v: want 9 or 10 dial failures, 50 proxied", st)
	}
	// Only the dead endpoint: four refused dials (250 ms, 500 ms, 1 s, 2 s at most),
	// then the client's connection is closed.
	before := p.Stats("web")
	if err := p.SetEndpoints("web", eps[1:2]); err != nil {
		t.Fatal(err)
	}
	if _, err := ask(t, p); !errors.Is(err, io.EOF) {
		t.Errorf("every dial refused: got %v, want EOF (accepted, then closed)", err)
	}
	if st := p.Stats("web"); st.DialFailures-before.DialFailures != 4 || st.Dropped != 1 {
		t.Errorf("every dial refused: stats %+v, want 4 more dial failures and 1 dropped", st)
	}
	if err := p.SetEndpoints("web", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ask(t, p); !errors.Is(err, io.EOF) {
		t.Errorf("no endpoints: got %v, want EOF (accepted, then closed)", err)
	}
	if err := p.SetEndpoints("nope", nil); err == nil {
		t.Error("SetEndpoints of an unknown service succeeded")
	}
}

// TestBackendResetIsClosedToClient: a backend that resets makes the proxy close the
// client's socket, which the client reads as EOF, as copyBytes did.
func TestBackendResetIsClosedToClient(t *testing.T) {
	p := loopbackProxy(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		// Reset once the request is in: the proxy's dial has succeeded and its copy
		// is under way.
		bufio.NewReader(c).ReadString('\n')
		c.(*net.TCPConn).SetLinger(0)
		c.Close() // RST
	}()
	p.SetEndpoints("web", []netip.AddrPort{netip.MustParseAddrPort(ln.Addr().String())})
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p.ListenPort("web")), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "request\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("backend reset: client got %v, want EOF (a FIN, as copyBytes closed it)", err)
	}
	if st := p.Stats("web"); st.Proxied != 1 || st.DialFailures != 0 {
		t.Errorf("stats %+v: want 1 proxied, no dial failure", st)
	}
}

func TestScript(t *testing.T) {
	p := loopbackProxy(t)
	port := p.ListenPort("web")
	got := p.script(netip.Addr{})
	for _, want := range []string{
		"type nat hook prerouting priority -100",
		fmt.Sprintf("ip daddr 198.19.0.1 tcp dport 80 redirect to :%d", port),
		"type nat hook output priority -100",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("script lacks %q:\n%s", want, got)
		}
	}
	if got := p.script(netip.MustParseAddr("198.18.0.1")); !strings.Contains(got, fmt.Sprintf("dnat to 198.18.0.1:%d", port)) {
		t.Errorf("host portal with HostIP:\n%s", got)
	}
}

// rig is a node with 3 web pods behind the userspace proxy and a caller pod.
type rig struct {
	c       *topo.Topology
	px      *Proxy
	servers []*serve.Server
	dialer  *topo.Dialer
	closed  bool // the test closed px itself
}

func newRig(t *testing.T) *rig {
	c, err := topo.Build([]string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	pod := emutest.Pod(t, "{serviceTime: {distribution: constant, value: 200us}}")
	var eps []netip.AddrPort
	var servers []*serve.Server
	for i := range 3 {
		p, err := c.AddPod(fmt.Sprintf("web-%d", i), "a")
		if err != nil {
			t.Fatal(err)
		}
		addr := netip.AddrPortFrom(p.IP, 8080)
		eps = append(eps, addr)
		servers = append(servers, emutest.Serve(t, topo.InNetns, p.NS, p.Name, addr, pod))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	px, err := New(ctx, Config{NS: c.NodeNS("a"), Seed: 1, Services: []Service{{Name: "web", ClusterIP: topo.ServiceIP(0), Port: 80}}})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{c: c, px: px, servers: servers}
	t.Cleanup(func() {
		if !r.closed {
			px.Close()
		}
	})
	if err := px.SetEndpoints("web", eps); err != nil {
		t.Fatal(err)
	}
	client, err := c.AddPod("caller-0", "a")
	if err != nil {
		t.Fatal(err)
	}
	dialer, err := topo.NewDialer(client.NS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dialer.Close)
	r.dialer = dialer
	return r
}

// run sends requests, each on a new connection, from the caller through the
// ClusterIP, and requires every one answered.
func (r *rig) run(t *testing.T, requests int64) *load.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := load.Run(ctx, load.Config{
		Target: fmt.Sprintf("http://%s:80/", topo.ServiceIP(0)), Duration: 20 * time.Second, Name: "caller",
		Phases: []load.Phase{{Threads: 1, Requests: requests}}, Timeout: 3 * time.Second,
		Conn: load.Connections{Reuse: scenario.ReuseNone, Protocol: scenario.ProtocolHTTP1}, Dial: r.dialer.DialContext, MaxRequests: requests,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests.OK != requests || rep.Requests.Failed != 0 {
		t.Fatalf("%d answered, %d failed of %d: %+v %v", rep.Requests.OK, rep.Requests.Failed, requests, rep.Errors, rep.OtherErrors)
	}
	if rep.Connections.Opened != requests {
		t.Errorf("opened %d connections for %d requests", rep.Connections.Opened, requests)
	}
	return rep
}

// fromNode: the node's own traffic takes the host portal (nat output): redirected
// to 127.0.0.1 and the proxy port (topo gives nodes the route to ClusterIPs that a
// real node's default route would).
func (r *rig) fromNode(t *testing.T) {
	nodeDialer, err := topo.NewDialer(r.c.NodeNS("a"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nodeDialer.Close)
	dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
	conn, err := nodeDialer.DialContext(dctx, "tcp", fmt.Sprintf("%s:80", topo.ServiceIP(0)))
	dcancel()
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: web\r\nConnection: close\r\n\r\n")
	answer, _ := io.ReadAll(conn)
	conn.Close()
	if !strings.Contains(string(answer), "200 OK") || !strings.Contains(string(answer), "web-") {
		t.Errorf("from the node through the host portal: %q", answer)
	}
}

// TestUserspaceProxyInNamespace is R2's userspace finding for real: three serve pods
// behind a ClusterIP that the node's nat table redirects to the proxy. A new connection
// per request spreads exactly round robin; with one pod's listener closed but still
// listed, every request still succeeds, because the proxy dials the next endpoint.
func TestUserspaceProxyInNamespace(t *testing.T) {
	emutest.NeedRoot(t, "ip", "nft")
	r := newRig(t)
	px, servers, c := r.px, r.servers, r.c

	spread := r.run(t, 90)
	t.Logf("90 new connections: %+v", spread.Pods)
	if len(spread.Pods) != 3 {
		t.Fatalf("reached %d pods, want 3: %+v", len(spread.Pods), spread.Pods)
	}
	for _, p := range spread.Pods {
		if p.Requests != 30 {
			t.Errorf("%s got %d of 90, want exactly 30 (round robin)", p.Name, p.Requests)
		}
	}

	servers[1].Terminate() // listener closed: refused; still an endpoint
	before := px.Stats("web")
	scaled := r.run(t, 60)
	after := px.Stats("web")
	failures := after.DialFailures - before.DialFailures
	t.Logf("60 new connections with web-1 refusing: %+v; %d dials refused and retried", scaled.Pods, failures)
	for _, p := range scaled.Pods {
		if p.Name == "web-1" || p.Requests != 30 {
			t.Errorf("%s got %d of 60, want 30 on each of web-0 and web-2", p.Name, p.Requests)
		}
	}
	// The dead endpoint is every third pick: 29 or 30 picks of 60 connections' land on
	// it, depending on its place in the shuffled order.
	if failures < 29 || failures > 30 {
		t.Errorf("%d dial failures, want 29 or 30", failures)
	}
	if after.Dropped != 0 {
		t.Errorf("%d client connections dropped", after.Dropped)
	}

	r.fromNode(t)

	r.closed = true
	if err := px.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := topo.Exec(ctx, c.NodeNS("a"), nil, "nft", "list", "table", "ip", Table); err == nil {
		t.Errorf("table %s still there after Close", Table)
	}
}
