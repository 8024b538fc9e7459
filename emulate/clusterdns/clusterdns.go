// Package clusterdns is the emulated cluster's DNS server, standing in for
// CoreDNS's kubernetes plugin as kubeadm configures it: it answers a headless
// Service's name with an A record per ready pod, TTL 30 s (kubeadm's Corefile: ttl
// 30), in a new random order for every response (the loadbalance plugin), with no
// cache in front (kubeadm disables the cache for the cluster domain), and NXDOMAIN
// for a Service with no ready pod or a name it does not know.
//
// CoreDNS itself is a 111 MB build of 360 modules that would need an API server to
// watch; this server is a few lines on miekg/dns, the library CoreDNS is built on,
// fed by the emulator as the EndpointSlices change.
package clusterdns

import (
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"sync"

	"github.com/miekg/dns"
)

// TTL is every answer's: kubeadm's Corefile sets ttl 30 in the kubernetes block.
const TTL = 30

// Zone is the cluster domain the server answers for.
const Zone = "cluster.local."

// Name is the fully qualified name of service in namespace ns.
func Name(service, ns string) string { return service + "." + ns + ".svc." + Zone }

// Server answers DNS queries for the headless Services it is told of.
type Server struct {
	mu    sync.Mutex
	names map[string][]netip.Addr // by lower-case FQDN; empty: no ready pod
	rng   *rand.Rand
	udp   *dns.Server
	tcp   *dns.Server
}

// Listen answers on addr (IP:PORT, port 0 for any free one), UDP and TCP, until
// Close, with rng shuffling the answers.
func Listen(addr string, rng *rand.Rand) (*Server, error) {
	pc, err := net.ListenPacket("udp4", addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp4", pc.LocalAddr().String())
	if err != nil {
		pc.Close()
		return nil, err
	}
	return serve(pc, ln, rng), nil
}

// Addr is where the server answers.
func (s *Server) Addr() string { return s.udp.PacketConn.LocalAddr().String() }

// serve answers on pc (UDP) and ln (TCP).
func serve(pc net.PacketConn, ln net.Listener, rng *rand.Rand) *Server {
	s := &Server{names: map[string][]netip.Addr{}, rng: rng}
	h := dns.HandlerFunc(s.answer)
	s.udp = &dns.Server{PacketConn: pc, Handler: h}
	s.tcp = &dns.Server{Listener: ln, Handler: h}
	go s.udp.ActivateAndServe()
	go s.tcp.ActivateAndServe()
	return s
}

// Set makes name resolve to addrs, in that order before shuffling; none makes it
// NXDOMAIN while still known.
func (s *Server) Set(name string, addrs []netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names[strings.ToLower(dns.Fqdn(name))] = append([]netip.Addr(nil), addrs...)
}

// Close stops serving.
func (s *Server) Close() {
	s.udp.Shutdown()
	s.tcp.Shutdown()
}

func (s *Server) answer(w dns.ResponseWriter, q *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(q)
	m.Authoritative = true
	if len(q.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		w.WriteMsg(m)
		return
	}
	qn := q.Question[0]
	s.mu.Lock()
	addrs, known := s.names[strings.ToLower(qn.Name)]
	addrs = append([]netip.Addr(nil), addrs...)
	if len(addrs) > 1 {
		s.rng.Shuffle(len(addrs), func(i, j int) { addrs[i], addrs[j] = addrs[j], addrs[i] })
	}
	s.mu.Unlock()
	switch {
	case !known || len(addrs) == 0:
		// A name outside the cluster's Services, a search-list suffix of ndots,
		// or a headless Service with no ready pod (plugin/kubernetes: errNoItems).
		m.Rcode = dns.RcodeNameError
	case qn.Qtype == dns.TypeA:
		for _, a := range addrs {
			m.Answer = append(m.Answer, &dns.A{
				Hdr: dns.RR_Header{Name: qn.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: TTL},
				A:   a.AsSlice(),
			})
		}
	}
	// Any other type of a known name: no data (NOERROR, empty), as for AAAA on an
	// IPv4 cluster.
	w.WriteMsg(m)
}
