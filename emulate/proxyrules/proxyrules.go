// Package proxyrules writes the rules kube-proxy writes for ClusterIP Services and
// applies them inside a network namespace that the emulator created.
//
// The generators are pure functions of a Rules value: IptablesRestore returns an
// iptables-restore input for the filter and nat tables, and NftablesScript returns an
// `nft -f` script for table `ip kube-proxy`. Both mirror one full sync of kube-proxy
// (kubernetes/kubernetes pkg/proxy/iptables/proxier.go and
// pkg/proxy/nftables/proxier.go, syncProxyRules), rule for rule and byte for byte
// where the rule text is kube-proxy's own, with the defaults a stock kube-proxy runs
// with. Each function cites the code it mirrors. Apply and Flush run them with
// `ip netns exec NAME ...`; they never touch the host's own tables.
//
// Chain and table names are kube-proxy's own (KUBE-SVC-<hash>, table kube-proxy, ...):
// the rules live inside a network namespace of their own, so nothing can clash with the
// host, and a reader can compare them with a real node's iptables-save or nft list
// output line by line. Config.Prefix, the emulator's per-run prefix, therefore names
// nothing; it only marks the generated text with a comment line.
//
// What is modelled: ClusterIP Services (one port each, TCP, UDP or SCTP), their
// usable endpoints, the no-endpoints REJECT, the masquerade rules of --cluster-cidr
// and --masquerade-all, and the fixed scaffolding kube-proxy writes on every full sync.
// What is not: NodePorts, ExternalIPs, LoadBalancers, traffic policies Local,
// sessionAffinity ClientIP, IPv6, nfacct counters, the KUBE-PROXY-CANARY monitor
// chains, partial syncs, and IPVS, which this kernel does not have (see
// ErrIPVSUnsupported).
package proxyrules

import (
	"cmp"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"trafficlab/model/kubeproxy"
)

// Mode is kube-proxy's --proxy-mode.
type Mode = kubeproxy.Mode

// The proxy modes whose rules this package writes.
var (
	Iptables = kubeproxy.Iptables
	Nftables = kubeproxy.Nftables
)

// ErrIPVSUnsupported is returned for proxy mode ipvs: IPVS needs the kernel's ip_vs
// modules, which this machine's kernel does not have. `trafficlab simulate` models the
// IPVS schedulers (model/kubeproxy).
var ErrIPVSUnsupported = errors.New("proxyrules: proxy mode ipvs needs the kernel's IPVS (ip_vs) modules, which this kernel does not have; use `trafficlab simulate`, whose model/kubeproxy models IPVS rr, lc, sh, sed and nq")

// ErrUserspaceHasNoRules is returned for proxy mode userspace, which writes no
// netfilter rules: it is a proxy process, not a rule set.
var ErrUserspaceHasNoRules = errors.New("proxyrules: proxy mode userspace writes no netfilter rules; it is a proxy process")

// Config holds the kube-proxy settings the rules depend on. The zero value is a stock
// kube-proxy with no --cluster-cidr.
type Config struct {
	// Prefix is the emulator's per-run prefix. It only goes into a comment at the top of
	// the generated text (see the package comment for why names carry no prefix).
	Prefix string
	// ClusterCIDR is --cluster-cidr, kube-proxy's default local-traffic detector
	// (--detect-local-mode=ClusterCIDR): a Service chain then masquerades traffic from
	// outside it (pkg/proxy/util/localdetector.go, NewDetectLocalByCIDR). The zero
	// value means unset, kube-proxy's no-op detector: no such rule.
	ClusterCIDR netip.Prefix
	// MasqueradeAll is --masquerade-all: masquerade all ClusterIP traffic.
	MasqueradeAll bool
	// ServiceCIDRs are the cluster's ServiceCIDR ranges. nftables mode drops traffic to
	// addresses in them that no Service holds (setupNFTables, "Drop traffic to
	// unallocated ClusterIPs"); iptables mode ignores them.
	ServiceCIDRs []netip.Prefix
	// NodeIP is the node's primary IP. nftables mode defaults to
	// --nodeport-addresses=primary and then lists it in the nodeport-ips set; the zero
	// value writes the accept-on-every-local-address variant instead. iptables mode's
	// default accepts NodePorts on every local address and ignores it.
	NodeIP netip.Addr
}

// Service is one port of a ClusterIP Service with the endpoints kube-proxy programs
// for it.
type Service struct {
	Name      string
	Namespace string // "" means "default"
	// PortName is the ServicePort's name; "" for a Service's only, unnamed port.
	PortName  string
	ClusterIP netip.Addr
	Port      uint16
	Protocol  string // "TCP" (the default when ""), "UDP" or "SCTP", as Kubernetes spells it
	// Endpoints are pod IP:targetPort pairs of the endpoints kube-proxy uses: the ready
	// ones, or, only if none is ready, the serving terminating ones (choose them with
	// model/kubeproxy.Usable). Order does not matter: kube-proxy sorts them by their
	// "IP:port" text (pkg/proxy/endpointslicecache.go, endpointsMapFromEndpointInfo and
	// byEndpoint), and so does this package. An empty list gets the REJECT rules.
	Endpoints []netip.AddrPort
}

// Rules is everything one kube-proxy full sync is computed from.
type Rules struct {
	Config
	Services []Service
}

// EndpointsAt returns ip:port for each ip, the endpoints of pods serving on one target
// port.
func EndpointsAt(port uint16, ips ...netip.Addr) []netip.AddrPort {
	out := make([]netip.AddrPort, len(ips))
	for i, ip := range ips {
		out[i] = netip.AddrPortFrom(ip, port)
	}
	return out
}

// UsableEndpoints returns the addresses of the endpoints kube-proxy programs, chosen
// with the simulator's own policy, model/kubeproxy.Usable: the ready endpoints, or,
// only if none is ready, the serving terminating ones (pkg/proxy/topology.go,
// CategorizeEndpoints). addr maps the engine's pod index to the pod's IP:targetPort.
func UsableEndpoints(states []kubeproxy.EndpointState, addr func(kubeproxy.Endpoint) netip.AddrPort) []netip.AddrPort {
	eps := kubeproxy.Usable(states, nil)
	out := make([]netip.AddrPort, len(eps))
	for i, ep := range eps {
		out[i] = addr(ep)
	}
	return out
}

// masqueradeMark is kube-proxy's mark for traffic to masquerade: 1 << --masquerade-bit
// (default 14) printed with %#08x, i.e. "0x00004000" (pkg/proxy/iptables/proxier.go and
// pkg/proxy/nftables/proxier.go, NewProxier).
var masqueradeMark = fmt.Sprintf("%#08x", 1<<14)

// servicePort is a validated Service with kube-proxy's derived strings.
type servicePort struct {
	// name is proxy.ServicePortName.String(): "namespace/name", plus ":port" when the
	// port is named (pkg/proxy/types.go, ServicePortName.String and fmtPortName).
	name      string
	namespace string
	svc       string
	portName  string
	protocol  string // lower case, as kube-proxy hashes and matches it
	clusterIP netip.Addr
	port      uint16
	endpoints []netip.AddrPort // sorted by their text, duplicates removed
}

// normalize validates the Services and returns them sorted by ServicePortName. kube-proxy
// ranges over a Go map here, so its order is random; the rules of different Services
// never overlap, so sorting changes nothing but makes the output stable.
func (r Rules) normalize() ([]servicePort, error) {
	if strings.ContainsAny(r.Prefix, "\r\n") {
		return nil, fmt.Errorf("proxyrules: prefix %q spans lines", r.Prefix)
	}
	if r.ClusterCIDR.IsValid() && !r.ClusterCIDR.Addr().Is4() {
		return nil, fmt.Errorf("proxyrules: cluster CIDR %s is not IPv4", r.ClusterCIDR)
	}
	for _, c := range r.ServiceCIDRs {
		if !c.IsValid() || !c.Addr().Is4() {
			return nil, fmt.Errorf("proxyrules: service CIDR %s is not an IPv4 prefix", c)
		}
	}
	if r.NodeIP.IsValid() && !r.NodeIP.Is4() {
		return nil, fmt.Errorf("proxyrules: node IP %s is not IPv4", r.NodeIP)
	}
	out := make([]servicePort, 0, len(r.Services))
	names := map[string]bool{}
	dests := map[string]string{}
	for _, s := range r.Services {
		sp, err := s.normalize()
		if err != nil {
			return nil, err
		}
		if names[sp.name] {
			return nil, fmt.Errorf("proxyrules: service port %s is listed twice", sp.name)
		}
		names[sp.name] = true
		dest := fmt.Sprintf("%s %s:%d", sp.protocol, sp.clusterIP, sp.port)
		if other, ok := dests[dest]; ok {
			return nil, fmt.Errorf("proxyrules: services %s and %s both claim %s", other, sp.name, dest)
		}
		dests[dest] = sp.name
		out = append(out, sp)
	}
	slices.SortFunc(out, func(a, b servicePort) int { return cmp.Compare(a.name, b.name) })
	return out, nil
}

func (s Service) normalize() (servicePort, error) {
	ns := s.Namespace
	if ns == "" {
		ns = "default"
	}
	sp := servicePort{namespace: ns, svc: s.Name, portName: s.PortName, clusterIP: s.ClusterIP, port: s.Port}
	sp.name = ns + "/" + s.Name
	if s.PortName != "" {
		sp.name += ":" + s.PortName
	}
	parts := []string{ns, s.Name}
	if s.PortName != "" {
		parts = append(parts, s.PortName)
	}
	for _, part := range parts {
		if !dnsLabel(part) {
			return sp, fmt.Errorf("proxyrules: service %s: %q is not a DNS label", sp.name, part)
		}
	}
	switch s.Protocol {
	case "", "TCP":
		sp.protocol = "tcp"
	case "UDP", "SCTP":
		sp.protocol = strings.ToLower(s.Protocol)
	default:
		return sp, fmt.Errorf("proxyrules: service %s: protocol %q is not TCP, UDP or SCTP", sp.name, s.Protocol)
	}
	if !s.ClusterIP.Is4() || s.ClusterIP.IsUnspecified() {
		return sp, fmt.Errorf("proxyrules: service %s: cluster IP %v is not an IPv4 address", sp.name, s.ClusterIP)
	}
	if s.Port == 0 {
		return sp, fmt.Errorf("proxyrules: service %s: port 0", sp.name)
	}
	for _, ep := range s.Endpoints {
		if !ep.Addr().Is4() || ep.Addr().IsUnspecified() || ep.Port() == 0 {
			return sp, fmt.Errorf("proxyrules: service %s: endpoint %v is not an IPv4 address and port", sp.name, ep)
		}
	}
	sp.endpoints = slices.Clone(s.Endpoints)
	slices.SortFunc(sp.endpoints, func(a, b netip.AddrPort) int { return cmp.Compare(a.String(), b.String()) })
	sp.endpoints = slices.Compact(sp.endpoints)
	return sp, nil
}

// dnsLabel reports whether s is a lower-case RFC 1123 label, as Kubernetes requires of
// namespace, Service and port names. It also keeps every name safe to print unquoted in
// an iptables comment or an nftables chain name.
func dnsLabel(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// hash16 is the first 16 characters of base32(sha256(s)), the hash in every iptables
// chain name kube-proxy makes (pkg/proxy/iptables/proxier.go, portProtoHash and
// servicePortEndpointChainName).
func hash16(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base32.StdEncoding.EncodeToString(sum[:])[:16]
}

// header is the comment line that opens generated text.
func (r Rules) header(what string) string {
	if r.Prefix == "" {
		return "# trafficlab: " + what + "\n"
	}
	return "# trafficlab run " + r.Prefix + ": " + what + "\n"
}

// lineBuffer collects lines of space-separated words, as kube-proxy's
// proxyutil.LineBuffer does (pkg/proxy/util/linebuffer.go, Write).
type lineBuffer struct{ strings.Builder }

func (b *lineBuffer) line(words ...string) {
	b.WriteString(strings.Join(words, " "))
	b.WriteByte('\n')
}
