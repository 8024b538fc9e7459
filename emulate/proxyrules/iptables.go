package proxyrules

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// kube-proxy's global iptables chains (pkg/proxy/iptables/proxier.go, the const block).
const (
	kubeServicesChain         = "KUBE-SERVICES"
	kubeExternalServicesChain = "KUBE-EXTERNAL-SERVICES"
	kubeNodePortsChain        = "KUBE-NODEPORTS"
	kubePostroutingChain      = "KUBE-POSTROUTING"
	kubeMarkMasqChain         = "KUBE-MARK-MASQ"
	kubeForwardChain          = "KUBE-FORWARD"
	kubeProxyFirewallChain    = "KUBE-PROXY-FIREWALL"
	kubeProxyCanaryChain      = "KUBE-PROXY-CANARY"
	kubeletFirewallChain      = "KUBE-FIREWALL"

	// Above this many endpoints in all, kube-proxy drops the per-endpoint comments
	// (largeClusterEndpointsThreshold, appendServiceCommentLocked).
	largeClusterEndpointsThreshold = 1000
)

// servicePortChainPrefixes are the per-service chain prefixes kube-proxy owns and may
// delete (isServiceChainName). Only KUBE-SVC- and KUBE-SEP- are written here; the others
// (Local policy, firewall, external) belong to Service types this package does not
// model, but a flush must still recognise them.
var servicePortChainPrefixes = []string{"KUBE-SVC-", "KUBE-SVL-", "KUBE-SEP-", "KUBE-FW-", "KUBE-EXT-"}

func isIptablesServiceChain(chain string) bool {
	for _, p := range servicePortChainPrefixes {
		if strings.HasPrefix(chain, p) {
			return true
		}
	}
	return false
}

// iptablesServiceChain is KUBE-SVC-<hash>: servicePortPolicyClusterChain, the prefix and
// portProtoHash(servicePortName.String(), protocol).
func iptablesServiceChain(sp servicePort) string {
	return "KUBE-SVC-" + hash16(sp.name+sp.protocol)
}

// iptablesEndpointChain is KUBE-SEP-<hash>: servicePortEndpointChainName, the hash of the
// service port name, the protocol and the endpoint's "IP:port" text.
func iptablesEndpointChain(sp servicePort, ep netip.AddrPort) string {
	return "KUBE-SEP-" + hash16(sp.name+sp.protocol+ep.String())
}

// probability is the --probability of a rule with n endpoints left to choose from:
// computeProbability, fmt.Sprintf("%0.10f", 1.0/float64(n)). model/kubeproxy's
// IptablesProbabilities holds the same numbers as floats.
func probability(n int) string {
	return fmt.Sprintf("%0.10f", 1.0/float64(n))
}

// iptablesJump is a rule in a built-in chain that jumps to one of kube-proxy's chains.
// kube-proxy does not write these in the iptables-restore input, which must not replace
// the built-in chains: on every full sync it makes sure the target chain exists
// (EnsureChain) and the rule is there, inserting it at the top if not
// (EnsureRule(Prepend, ...)).
type iptablesJump struct {
	table, target, from, comment string
	extra                        []string
}

// args is the rule as iptables' arguments (without -A/-I/-C/-D and the chain).
func (j iptablesJump) args() []string {
	a := slices.Clone(j.extra)
	if j.comment != "" {
		a = append(a, "-m", "comment", "--comment", j.comment)
	}
	return append(a, "-j", j.target)
}

// iptablesJumps are iptablesJumpChains followed by iptablesKubeletJumpChains, in the
// order syncProxyRules ensures them.
var iptablesJumps = []iptablesJump{
	{"filter", kubeExternalServicesChain, "INPUT", "kubernetes externally-visible service portals", ctstateNew},
	{"filter", kubeExternalServicesChain, "FORWARD", "kubernetes externally-visible service portals", ctstateNew},
	{"filter", kubeNodePortsChain, "INPUT", "kubernetes health check service ports", nil},
	{"filter", kubeServicesChain, "FORWARD", "kubernetes service portals", ctstateNew},
	{"filter", kubeServicesChain, "OUTPUT", "kubernetes service portals", ctstateNew},
	{"filter", kubeForwardChain, "FORWARD", "kubernetes forwarding rules", nil},
	{"filter", kubeProxyFirewallChain, "INPUT", "kubernetes load balancer firewall", ctstateNew},
	{"filter", kubeProxyFirewallChain, "OUTPUT", "kubernetes load balancer firewall", ctstateNew},
	{"filter", kubeProxyFirewallChain, "FORWARD", "kubernetes load balancer firewall", ctstateNew},
	{"nat", kubeServicesChain, "OUTPUT", "kubernetes service portals", nil},
	{"nat", kubeServicesChain, "PREROUTING", "kubernetes service portals", nil},
	{"nat", kubePostroutingChain, "POSTROUTING", "kubernetes postrouting rules", nil},
	// kubelet's own anti-martian chain, which kube-proxy duplicates.
	{"filter", kubeletFirewallChain, "INPUT", "", nil},
	{"filter", kubeletFirewallChain, "OUTPUT", "", nil},
}

var ctstateNew = []string{"-m", "conntrack", "--ctstate", "NEW"}

// IptablesRestore returns the input kube-proxy feeds to `iptables-restore --noflush
// --counters` on a full sync (pkg/proxy/iptables/proxier.go, syncProxyRules, which
// writes filterChains, filterRules, natChains and natRules and calls RestoreAll with
// NoFlushTables and RestoreCounters). existingNAT lists the chains the nat table holds
// now, as iptables-save shows them; those of kube-proxy's service chains that the new
// rules no longer use are flushed and deleted at the end, as syncProxyRules does.
//
// The settings are kube-proxy's defaults on a Linux host with iptables ≥ 1.6.2:
// --masquerade-bit 14, localhost NodePorts on (so the KUBE-FIREWALL anti-martian rule is
// written), --nodeport-addresses unset (the NodePort tail rule matches every local
// address), MASQUERADE --random-fully, nf_conntrack_tcp_be_liberal unset (so the
// INVALID-drop rule is written), no nfacct counters.
func (r Rules) IptablesRestore(existingNAT []string) ([]byte, error) {
	svcs, err := r.normalize()
	if err != nil {
		return nil, err
	}
	total := 0
	for _, sp := range svcs {
		total += len(sp.endpoints)
	}
	s := iptablesSync{largeCluster: total > largeClusterEndpointsThreshold, active: map[string]bool{}}
	s.fixedChains()
	for _, sp := range svcs {
		s.servicePort(r, sp)
	}
	s.deleteStale(existingNAT)
	s.tailRules()

	var out strings.Builder
	out.WriteString(r.header("kube-proxy iptables-mode rules for iptables-restore --noflush --counters"))
	out.WriteString("*filter\n")
	out.WriteString(s.filterChains.String())
	out.WriteString(s.filterRules.String())
	out.WriteString("COMMIT\n*nat\n")
	out.WriteString(s.natChains.String())
	out.WriteString(s.natRules.String())
	out.WriteString("COMMIT\n")
	return []byte(out.String()), nil
}

// iptablesSync is the four buffers syncProxyRules fills, and what it knows while
// filling them.
type iptablesSync struct {
	filterChains, filterRules, natChains, natRules lineBuffer

	largeCluster bool            // too many endpoints for per-endpoint comments
	active       map[string]bool // the nat service chains written
}

// chainLine declares a chain, which also flushes it (utiliptables.MakeChainLine).
func chainLine(b *lineBuffer, chain string) { b.line(":" + chain + " - [0:0]") }

// fixedChains declares the top-level chains, flushed by their chain lines on every
// full sync, and writes the masquerade and anti-martian rules.
func (s *iptablesSync) fixedChains() {
	mark := masqueradeMark
	for _, c := range []string{kubeServicesChain, kubeExternalServicesChain, kubeForwardChain, kubeNodePortsChain, kubeProxyFirewallChain} {
		chainLine(&s.filterChains, c)
	}
	for _, c := range []string{kubeServicesChain, kubeNodePortsChain, kubePostroutingChain, kubeMarkMasqChain} {
		chainLine(&s.natChains, c)
	}

	// Masquerade what KUBE-MARK-MASQ marked, clearing the mark first.
	s.natRules.line("-A", kubePostroutingChain, "-m", "mark", "!", "--mark", mark+"/"+mark, "-j", "RETURN")
	s.natRules.line("-A", kubePostroutingChain, "-j", "MARK", "--xor-mark", mark)
	s.natRules.line("-A", kubePostroutingChain, "-m", "comment", "--comment", `"kubernetes service traffic requiring SNAT"`, "-j", "MASQUERADE", "--random-fully")
	s.natRules.line("-A", kubeMarkMasqChain, "-j", "MARK", "--or-mark", mark)

	// localhostNodePorts (the default) and IPv4: kubelet's anti-martian rule.
	chainLine(&s.filterChains, kubeletFirewallChain)
	s.filterRules.line("-A", kubeletFirewallChain, "-m", "comment", "--comment", `"block incoming localnet connections"`,
		"-d", "127.0.0.0/8", "!", "-s", "127.0.0.0/8", "-m", "conntrack", "!", "--ctstate", "RELATED,ESTABLISHED,DNAT", "-j", "DROP")
}

// servicePort writes one service port's rules: a filter REJECT if it has no endpoints,
// else its ClusterIP capture and its service and endpoint chains.
func (s *iptablesSync) servicePort(r Rules, sp servicePort) {
	proto, ip, port := sp.protocol, sp.clusterIP.String(), strconv.Itoa(int(sp.port))
	svcChain := iptablesServiceChain(sp)
	dest := []string{"-m", proto, "-p", proto, "-d", ip, "--dport", port}
	clusterIPComment := []string{"-m", "comment", "--comment", `"` + sp.name + ` cluster IP"`}

	if len(sp.endpoints) == 0 {
		// No endpoints at all: no nat chains, only a filter REJECT (ICMP port
		// unreachable, so the client is refused at once), reached from
		// OUTPUT and FORWARD for NEW connections.
		s.filterRules.line(slices.Concat([]string{"-A", kubeServicesChain, "-m", "comment", "--comment", `"` + sp.name + ` has no endpoints"`}, dest, []string{"-j", "REJECT"})...)
		return
	}

	// Capture the ClusterIP.
	s.natRules.line(slices.Concat([]string{"-A", kubeServicesChain}, clusterIPComment, dest, []string{"-j", svcChain})...)

	// Internal traffic handling: masquerade traffic to the ClusterIP that does not
	// come from a pod.
	switch {
	case r.MasqueradeAll:
		s.natRules.line(slices.Concat([]string{"-A", svcChain}, clusterIPComment, dest, []string{"-j", kubeMarkMasqChain})...)
	case r.ClusterCIDR.IsValid():
		s.natRules.line(slices.Concat([]string{"-A", svcChain}, clusterIPComment, dest, []string{"!", "-s", r.ClusterCIDR.String(), "-j", kubeMarkMasqChain})...)
	}

	s.serviceChain(sp, svcChain)
	s.endpointChains(sp)
}

// serviceChain writes writeServiceToEndpointRules: rule i matches with probability
// 1/(n-i); the last one always matches.
func (s *iptablesSync) serviceChain(sp servicePort, svcChain string) {
	chainLine(&s.natChains, svcChain)
	s.active[svcChain] = true
	n := len(sp.endpoints)
	for i, ep := range sp.endpoints {
		words := []string{"-A", svcChain}
		if !s.largeCluster {
			words = append(words, "-m", "comment", "--comment", `"`+sp.name+" -> "+ep.String()+`"`)
		}
		if i < n-1 {
			words = append(words, "-m", "statistic", "--mode", "random", "--probability", probability(n-i))
		}
		s.natRules.line(append(words, "-j", iptablesEndpointChain(sp, ep))...)
	}
}

// endpointChains writes one chain per endpoint: mark hairpin traffic (a pod reaching
// itself through the Service) for masquerade, then DNAT.
func (s *iptablesSync) endpointChains(sp servicePort) {
	proto := sp.protocol
	for _, ep := range sp.endpoints {
		epChain := iptablesEndpointChain(sp, ep)
		chainLine(&s.natChains, epChain)
		s.active[epChain] = true
		words := []string{"-A", epChain}
		if !s.largeCluster {
			words = append(words, "-m", "comment", "--comment", sp.name)
		}
		s.natRules.line(slices.Concat(words, []string{"-s", ep.Addr().String(), "-j", kubeMarkMasqChain})...)
		s.natRules.line(slices.Concat(words, []string{"-m", proto, "-p", proto, "-j", "DNAT", "--to-destination", ep.String()})...)
	}
}

// deleteStale deletes the service chains of existingNAT no longer in use: a chain line
// flushes, then -X deletes.
func (s *iptablesSync) deleteStale(existingNAT []string) {
	stale := slices.Clone(existingNAT)
	slices.Sort(stale)
	for _, c := range slices.Compact(stale) {
		if isIptablesServiceChain(c) && !s.active[c] {
			chainLine(&s.natChains, c)
			s.natRules.line("-X", c)
		}
	}
}

// tailRules writes the rules that follow every service's: the NodePort tail call,
// last in KUBE-SERVICES (every local address; localhost NodePorts allowed), and
// KUBE-FORWARD's.
func (s *iptablesSync) tailRules() {
	mark := masqueradeMark
	s.natRules.line("-A", kubeServicesChain, "-m", "comment", "--comment", `"kubernetes service nodeports; NOTE: this must be the last rule in this chain"`,
		"-m", "addrtype", "--dst-type", "LOCAL", "-j", kubeNodePortsChain)

	s.filterRules.line("-A", kubeForwardChain, "-m", "conntrack", "--ctstate", "INVALID", "-j", "DROP")
	s.filterRules.line("-A", kubeForwardChain, "-m", "comment", "--comment", `"kubernetes forwarding rules"`, "-m", "mark", "--mark", mark+"/"+mark, "-j", "ACCEPT")
	s.filterRules.line("-A", kubeForwardChain, "-m", "comment", "--comment", `"kubernetes forwarding conntrack rule"`, "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT")
}

// iptablesCleanup returns the iptables-restore input that flushes and deletes
// kube-proxy's chains in table ("nat" or "filter"), given the chains the table holds
// now (pkg/proxy/iptables/proxier.go, cleanupLeftoversForFamily). Unlike kube-proxy it
// also removes KUBE-FIREWALL, which kube-proxy leaves to kubelet: in the emulator's
// namespaces it was written by Apply, and a flush leaves nothing of Apply's behind.
func iptablesCleanup(table string, existing []string) []byte {
	have := map[string]bool{}
	for _, c := range existing {
		have[c] = true
	}
	var fixed []string
	switch table {
	case "nat":
		fixed = []string{kubeServicesChain, kubeNodePortsChain, kubePostroutingChain, kubeMarkMasqChain, kubeProxyCanaryChain}
	case "filter":
		fixed = []string{kubeServicesChain, kubeExternalServicesChain, kubeForwardChain, kubeNodePortsChain, kubeProxyFirewallChain, kubeProxyCanaryChain, kubeletFirewallChain}
	}
	var del []string
	for _, c := range fixed {
		if have[c] {
			del = append(del, c)
		}
	}
	if table == "nat" {
		var svc []string
		for c := range have {
			if isIptablesServiceChain(c) {
				svc = append(svc, c)
			}
		}
		slices.Sort(svc)
		del = append(del, svc...)
	}
	var chains, rules lineBuffer
	for _, c := range del {
		chains.line(":" + c + " - [0:0]")
		rules.line("-X", c)
	}
	return []byte("*" + table + "\n" + chains.String() + rules.String() + "COMMIT\n")
}

// iptablesSavedChains returns the chain names declared in iptables-save output
// (utiliptables.GetChainsFromTable: the ":NAME POLICY [p:b]" lines).
func iptablesSavedChains(save []byte) []string {
	var out []string
	for line := range strings.Lines(string(save)) {
		if name, ok := strings.CutPrefix(line, ":"); ok {
			if f := strings.Fields(name); len(f) > 0 {
				out = append(out, f[0])
			}
		}
	}
	return out
}
