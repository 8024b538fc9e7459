// Package userspace is kube-proxy's userspace mode for real, inside a node's network
// namespace: a TCP proxy in this process that listens on a port of its own for each
// Service, with the node's nat table redirecting the Service's ClusterIP:port to that
// port, round robin over the endpoints, and a failed dial retried on the next endpoint.
//
// It follows kubernetes/kubernetes pkg/proxy/userspace (the mode was removed in 1.26):
//
//   - proxier.go: each service port gets a proxy socket on a port the OS picks (an empty
//     --proxy-port-range allocates port 0), and two portal rules: in KUBE-PORTALS-CONTAINER
//     (nat PREROUTING, traffic from pods) `-d CLUSTERIP/32 -p tcp --dport PORT -j REDIRECT
//     --to-ports PROXYPORT` (iptablesContainerPortalArgs, proxy bound to 0.0.0.0), and in
//     KUBE-PORTALS-HOST (nat OUTPUT, the node's own traffic) a DNAT to a non-loopback node
//     address and the proxy port (iptablesHostPortalArgs: REDIRECT of local packets goes to
//     127.0.0.1, which empirically broke replies). Here the rules are nftables, in a table
//     of this package's own (Table), applied with topo.Exec; the host rule DNATs to
//     Config.HostIP when given, else redirects (to 127.0.0.1, which works for TCP here).
//   - proxysocket.go: ProxyLoop accepts a connection and, in the accept loop itself, calls
//     tryConnect: NextEndpoint, then net.DialTimeout with endpointDialTimeout 250 ms,
//     500 ms, 1 s, 2 s, one attempt each, each failed attempt taking the next endpoint
//     (kubeproxy.Userspace.DialTimeouts()). With no endpoint, or after the last attempt, the
//     client's connection is closed. Otherwise proxyTCP copies both ways; when either
//     copy ends, for EOF or an error, copyBytes closes both sockets (no half-close).
//   - roundrobin.go: LoadBalancerRR. NextEndpoint takes endpoints[index] and moves the
//     index on; OnEndpointsUpdate keeps order and index for an unchanged set and stores a
//     changed one shuffled with the index at 0. This is model/kubeproxy's userspace
//     balancer, reused as it is (kubeproxy.New(kubeproxy.Userspace, ...)); sessionAffinity is None.
//
// What a client sees, as with the real proxier: its connect always succeeds (the
// kernel accepts for the proxy); a dead endpoint costs a retry, not an error, which is
// why userspace showed no errors at scale-in (R2 in examples/README.md); with no endpoint left the
// accepted connection is closed (EOF, never "refused"). A backend's reset ends the copy
// with an error, and the proxy then closes the client's socket normally: the client gets
// a FIN, not a reset (the kernel sends a reset instead only if the client's socket still
// holds bytes the proxy had not read).
package userspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"trafficlab/emulate/topo"
	"trafficlab/model/kubeproxy"
)

// Table is the nftables table (family ip) that holds the portal rules, in the node's
// namespace. New replaces one that is there; Close deletes it.
const Table = "trafficlab_userspace"

// DefaultMaxConns bounds the connections a Proxy carries at once when Config.MaxConns is
// 0; a connection accepted beyond it is closed at once. (The real proxier had no bound
// short of the process's file descriptors, where it panicked: isTooManyFDsError.)
const DefaultMaxConns = 10_000

// Service is one Service port the proxy serves (TCP).
type Service struct {
	Name      string
	ClusterIP netip.Addr
	Port      uint16
}

// Config is one node's userspace kube-proxy.
type Config struct {
	// NS is the node's network namespace (topo.Topology.NodeNS).
	NS string
	// Services each get a listener and portal rules. Names must be unique.
	Services []Service
	// Seed derives each service's shuffle stream (OnEndpointsUpdate).
	Seed uint64
	// HostIP, when valid, is the node address the host portal (nat output) DNATs to, as
	// iptablesHostPortalArgs did; otherwise that rule redirects.
	HostIP netip.Addr
	// MaxConns bounds concurrent proxied connections; 0 means DefaultMaxConns.
	MaxConns int
}

// Stats counts what one service's proxy did.
type Stats struct {
	// Accepted client connections; Proxied of them reached an endpoint.
	Accepted, Proxied int64
	// DialFailures are failed dial attempts (each one moved on to the next endpoint).
	DialFailures int64
	// Dropped connections were closed without reaching an endpoint: no endpoints,
	// every attempt failed, or MaxConns was reached.
	Dropped int64
}

// Proxy is a running userspace kube-proxy in one node's namespace.
type Proxy struct {
	ns       string
	dial     func(ctx context.Context, addr string) (net.Conn, error)
	closeDl  func()
	maxConns int
	svcs     map[string]*service
	order    []*service
	wg       sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

type service struct {
	Service
	ln net.Listener

	mu    sync.Mutex
	lb    kubeproxy.Balancer
	addrs []netip.AddrPort                      // by kubeproxy.Endpoint
	ids   map[netip.AddrPort]kubeproxy.Endpoint // stable, so an unchanged set compares equal
	stats struct{ accepted, proxied, dialFailures, dropped atomic.Int64 }
}

// New starts the proxy in cfg.NS: a listener on a free port of the namespace for each
// service, then the portal rules that send each ClusterIP:port there. Services start
// with no endpoints (connections are accepted and closed) until SetEndpoints. It needs
// root and nft.
func New(ctx context.Context, cfg Config) (*Proxy, error) {
	if cfg.NS == "" {
		return nil, errors.New("userspace: no namespace")
	}
	if _, err := exec.LookPath("nft"); err != nil {
		return nil, fmt.Errorf("userspace: the portal rules need nft: %w", err)
	}
	d, err := topo.NewDialer(cfg.NS)
	if err != nil {
		return nil, err
	}
	dial := func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }
	listen := func() (ln net.Listener, err error) {
		err = topo.InNetns(cfg.NS, func() (err error) { ln, err = net.Listen("tcp4", "0.0.0.0:0"); return err })
		return ln, err
	}
	p, err := start(cfg, dial, listen)
	if err != nil {
		d.Close()
		return nil, err
	}
	p.ns, p.closeDl = cfg.NS, d.Close
	if err := topo.Exec(ctx, cfg.NS, []byte(p.script(cfg.HostIP)), "nft", "-f", "-"); err != nil {
		p.Close()
		return nil, fmt.Errorf("userspace: portal rules: %w", err)
	}
	return p, nil
}

// start opens the listeners and runs the accept loops, without rules: New in a
// namespace, tests on the host's loopback.
func start(cfg Config, dial func(context.Context, string) (net.Conn, error), listen func() (net.Listener, error)) (*Proxy, error) {
	p := &Proxy{dial: dial, maxConns: cfg.MaxConns, svcs: map[string]*service{}, conns: map[net.Conn]struct{}{}}
	if p.maxConns <= 0 {
		p.maxConns = DefaultMaxConns
	}
	for i, s := range cfg.Services {
		if _, dup := p.svcs[s.Name]; dup || s.Name == "" {
			p.Close()
			return nil, fmt.Errorf("userspace: service name %q empty or repeated", s.Name)
		}
		if !s.ClusterIP.Is4() || s.Port == 0 {
			p.Close()
			return nil, fmt.Errorf("userspace: service %s: want an IPv4 ClusterIP and a port, got %v:%d", s.Name, s.ClusterIP, s.Port)
		}
		lb, err := kubeproxy.New(kubeproxy.Userspace, "", rand.New(rand.NewPCG(cfg.Seed, uint64(i))))
		if err != nil {
			p.Close()
			return nil, err
		}
		ln, err := listen()
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("userspace: service %s: %w", s.Name, err)
		}
		svc := &service{Service: s, ln: ln, lb: lb, ids: map[netip.AddrPort]kubeproxy.Endpoint{}}
		p.svcs[s.Name] = svc
		p.order = append(p.order, svc)
		p.wg.Add(1)
		go p.proxyLoop(svc)
	}
	return p, nil
}

// script is the nft transaction that (re)creates Table with both portal chains.
func (p *Proxy) script(hostIP netip.Addr) string {
	var b strings.Builder
	fmt.Fprintf(&b, "add table ip %s\ndelete table ip %s\ntable ip %s {\n", Table, Table, Table)
	b.WriteString("\tchain portals-container {\n\t\ttype nat hook prerouting priority -100; policy accept;\n")
	for _, s := range p.order {
		fmt.Fprintf(&b, "\t\tip daddr %s tcp dport %d redirect to :%d comment %q\n", s.ClusterIP, s.Port, s.ListenPort(), s.Name)
	}
	b.WriteString("\t}\n\tchain portals-host {\n\t\ttype nat hook output priority -100; policy accept;\n")
	for _, s := range p.order {
		if hostIP.Is4() {
			fmt.Fprintf(&b, "\t\tip daddr %s tcp dport %d dnat to %s:%d comment %q\n", s.ClusterIP, s.Port, hostIP, s.ListenPort(), s.Name)
		} else {
			fmt.Fprintf(&b, "\t\tip daddr %s tcp dport %d redirect to :%d comment %q\n", s.ClusterIP, s.Port, s.ListenPort(), s.Name)
		}
	}
	b.WriteString("\t}\n}\n")
	return b.String()
}

// ListenPort is the port the service's proxy socket listens on.
func (s *service) ListenPort() int { return s.ln.Addr().(*net.TCPAddr).Port }

// ListenPort is the port the named service's proxy listens on in the node's
// namespace; 0 if there is no such service.
func (p *Proxy) ListenPort(service string) int {
	if s, ok := p.svcs[service]; ok {
		return s.ListenPort()
	}
	return 0
}

// SetEndpoints replaces the named service's endpoints, as OnEndpointsUpdate: the same
// set (in any order) keeps the rotation; a different one is shuffled and the rotation
// restarts. The orchestrator calls it when the node's kube-proxy would have synced.
func (p *Proxy) SetEndpoints(service string, eps []netip.AddrPort) error {
	s, ok := p.svcs[service]
	if !ok {
		return fmt.Errorf("userspace: no service %q", service)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]kubeproxy.Endpoint, 0, len(eps))
	for _, ep := range eps {
		if !ep.IsValid() {
			return fmt.Errorf("userspace: service %s: invalid endpoint %v", service, ep)
		}
		id, ok := s.ids[ep]
		if !ok {
			id = kubeproxy.Endpoint(len(s.addrs))
			s.addrs = append(s.addrs, ep)
			s.ids[ep] = id
		}
		ids = append(ids, id)
	}
	s.lb.SetEndpoints(ids)
	return nil
}

// Stats returns what the named service's proxy has done so far.
func (p *Proxy) Stats(service string) Stats {
	s, ok := p.svcs[service]
	if !ok {
		return Stats{}
	}
	return Stats{s.stats.accepted.Load(), s.stats.proxied.Load(), s.stats.dialFailures.Load(), s.stats.dropped.Load()}
}

// next is NextEndpoint.
func (s *service) next() (netip.AddrPort, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.lb.Pick(0)
	if !ok {
		return netip.AddrPort{}, false
	}
	return s.addrs[id], true
}

// proxyLoop is tcpProxySocket.ProxyLoop: accept, connect (in this loop, one dial at a
// time per service, as the real one did), then copy in goroutines of their own.
func (p *Proxy) proxyLoop(s *service) {
	defer p.wg.Done()
	for {
		in, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			time.Sleep(10 * time.Millisecond) // e.g. EMFILE: do not spin
			continue
		}
		s.stats.accepted.Add(1)
		if !p.track(in) {
			s.stats.dropped.Add(1)
			in.Close()
			continue
		}
		out, err := p.tryConnect(s)
		if err != nil {
			s.stats.dropped.Add(1)
			p.untrack(in)
			in.Close()
			continue
		}
		if !p.track(out) {
			s.stats.dropped.Add(1)
			out.Close()
			p.untrack(in)
			in.Close()
			continue
		}
		s.stats.proxied.Add(1)
		p.wg.Add(1)
		go p.proxyTCP(in, out)
	}
}

// tryConnect is proxysocket.go tryConnect for sessionAffinity None: one attempt per
// timeout of kubeproxy.Userspace.DialTimeouts(), each on the next endpoint.
func (p *Proxy) tryConnect(s *service) (net.Conn, error) {
	for _, timeout := range kubeproxy.Userspace.DialTimeouts() {
		ep, ok := s.next()
		if !ok {
			return nil, errors.New("no endpoints")
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		out, err := p.dial(ctx, ep.String())
		cancel()
		if err == nil {
			return out, nil
		}
		s.stats.dialFailures.Add(1)
		if p.isClosed() {
			return nil, net.ErrClosed
		}
	}
	return nil, errors.New("failed to connect to an endpoint")
}

// proxyTCP relays one connection (Relay) and forgets both sockets.
func (p *Proxy) proxyTCP(in, out net.Conn) {
	defer p.wg.Done()
	Relay(in, out)
	p.untrack(in)
	p.untrack(out)
}

// Relay copies in's bytes to out and out's to in, as proxysocket.go's proxyTCP and
// copyBytes do: each direction copies until EOF or an error, then closes both
// sockets, and the other direction then ends on the closed socket. It returns once
// both have ended. cmd/cpucost measures the CPU it spends.
func Relay(in, out net.Conn) {
	var wg sync.WaitGroup
	wg.Add(2)
	copyBytes := func(dst, src net.Conn) {
		defer wg.Done()
		io.Copy(dst, src)
		dst.Close()
		src.Close()
	}
	go copyBytes(in, out) // from backend
	go copyBytes(out, in) // to backend
	wg.Wait()
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.conns) >= 2*p.maxConns {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

func (p *Proxy) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// Close deletes the portal rules, closes the listeners and every proxied connection
// (as the kube-proxy process exiting would; the real proxier's Close of one proxy
// socket left its connections alone), and returns once nothing of the proxy runs. It
// returns the rules' deletion error, if any. Calling it again does nothing.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	conns := p.conns
	p.conns = map[net.Conn]struct{}{}
	p.mu.Unlock()

	var err error
	if p.ns != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = topo.Exec(ctx, p.ns, nil, "nft", "delete", "table", "ip", Table)
		cancel()
	}
	for _, s := range p.order {
		s.ln.Close()
	}
	for c := range conns {
		c.Close()
	}
	p.wg.Wait()
	if p.closeDl != nil {
		p.closeDl()
	}
	return err
}
