package proxyrules

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// nftablesTable is kube-proxy's table; every chain, set and map lives in it, so none
// needs a prefix of its own (pkg/proxy/nftables/proxier.go, kubeProxyTable).
const nftablesTable = "kube-proxy"

// kube-proxy's fixed nftables objects (pkg/proxy/nftables/proxier.go, the const block).
const (
	filterPreroutingChain     = "filter-prerouting"
	filterInputChain          = "filter-input"
	filterForwardChain        = "filter-forward"
	filterOutputChain         = "filter-output"
	filterOutputPostDNATChain = "filter-output-post-dnat"
	natPreroutingChain        = "nat-prerouting"
	natOutputChain            = "nat-output"
	natPostroutingChain       = "nat-postrouting"

	servicesChain       = "services"
	serviceIPsMap       = "service-ips"
	serviceNodePortsMap = "service-nodeports"
	nodePortIPsSet      = "nodeport-ips"
	clusterIPsSet       = "cluster-ips"

	serviceEndpointsCheckChain  = "service-endpoints-check"
	nodePortEndpointsCheckChain = "nodeport-endpoints-check"
	noEndpointServicesMap       = "no-endpoint-services"
	noEndpointNodePortsMap      = "no-endpoint-nodeports"
	rejectChain                 = "reject-chain"
	clusterIPsCheckChain        = "cluster-ips-check"
	firewallIPsMap              = "firewall-ips"
	firewallCheckChain          = "firewall-check"
	markMasqChain               = "mark-for-masquerade"
	masqueradingChain           = "masquerading"

	// chainNameBaseLengthMax is knftables.NameLengthMax (256) less the longest chain
	// prefix (16).
	chainNameBaseLengthMax = 256 - 16
)

// nftablesBaseChains are kube-proxy's base chains with their type, hook and priority,
// the priority as knftables prints it: a number, dstnat being -100 and srcnat 100
// (nftablesBaseChains; knftables ParsePriority).
var nftablesBaseChains = []struct {
	name, typ, hook string
	priority        int
}{
	{filterPreroutingChain, "filter", "prerouting", -110},
	{filterInputChain, "filter", "input", -110},
	{filterForwardChain, "filter", "forward", -110},
	{filterOutputChain, "filter", "output", -110},
	{filterOutputPostDNATChain, "filter", "output", -90},
	{natPreroutingChain, "nat", "prerouting", -100},
	{natOutputChain, "nat", "output", -100},
	{natPostroutingChain, "nat", "postrouting", 100},
}

// nftablesJumpChains are the regular chains jumped to from the base chains
// (nftablesJumpChains): target, base chain, condition.
var nftablesJumpChains = []struct{ target, from, cond string }{
	{nodePortEndpointsCheckChain, filterInputChain, "ct state new"},
	{serviceEndpointsCheckChain, filterInputChain, "ct state new"},
	{serviceEndpointsCheckChain, filterForwardChain, "ct state new"},
	{serviceEndpointsCheckChain, filterOutputChain, "ct state new"},
	{firewallCheckChain, filterPreroutingChain, "ct state new"},
	{firewallCheckChain, filterOutputChain, "ct state new"},
	{servicesChain, natOutputChain, ""},
	{servicesChain, natPreroutingChain, ""},
	{masqueradingChain, natPostroutingChain, ""},
	{clusterIPsCheckChain, filterForwardChain, "ct state new"},
	{clusterIPsCheckChain, filterOutputPostDNATChain, "ct state new"},
}

// hashAndTruncate prefixes name with 8 characters of base32(sha256(name)) and a dash,
// and truncates the result to chainNameBaseLengthMax (hashAndTruncate).
func hashAndTruncate(name string) string {
	sum := sha256.Sum256([]byte(name))
	name = base32.StdEncoding.EncodeToString(sum[:])[:8] + "-" + name
	if len(name) > chainNameBaseLengthMax {
		name = name[:chainNameBaseLengthMax-3] + "..."
	}
	return name
}

// nftablesServiceChain is "service-HASH-namespace/name/protocol/portName"
// (servicePortChainNameBase and servicePortPolicyClusterChainNamePrefix).
func nftablesServiceChain(sp servicePort) string {
	return "service-" + hashAndTruncate(fmt.Sprintf("%s/%s/%s/%s", sp.namespace, sp.svc, sp.protocol, sp.portName))
}

// nftablesEndpointChain is "endpoint-HASH-namespace/name/protocol/portName__IP/port"
// (servicePortEndpointChainNameBase and servicePortEndpointChainNamePrefix).
func nftablesEndpointChain(sp servicePort, ep netip.AddrPort) string {
	return "endpoint-" + hashAndTruncate(fmt.Sprintf("%s/%s/%s/%s__%s/%d", sp.namespace, sp.svc, sp.protocol, sp.portName, ep.Addr(), ep.Port()))
}

// isNftablesServiceChain reports whether chain is a per-service chain: only those have
// a "/" in their name (isServiceChainName).
func isNftablesServiceChain(chain string) bool { return strings.Contains(chain, "/") }

// nftablesActiveChains returns the per-service chains the rules use.
func nftablesActiveChains(svcs []servicePort) map[string]bool {
	active := map[string]bool{}
	for _, sp := range svcs {
		if len(sp.endpoints) == 0 {
			continue
		}
		active[nftablesServiceChain(sp)] = true
		for _, ep := range sp.endpoints {
			active[nftablesEndpointChain(sp, ep)] = true
		}
	}
	return active
}

// NftablesScript returns the transaction kube-proxy runs with `nft -f` on a full sync
// (pkg/proxy/nftables/proxier.go: syncProxyRules, setupNFTables and
// writeServiceToEndpointRules, written out as knftables prints each object). existing
// lists the chains table ip kube-proxy holds now; per-service chains among them that the
// new rules no longer use are flushed, and deleted by a later sync (Apply does that
// deletion in a transaction of its own, as kube-proxy does once they have been stale for
// a second). firstSync adds kube-proxy's once-per-process add-and-delete of the base
// chains, which lets a restarted kube-proxy change their priorities.
//
// The settings are kube-proxy's defaults: --masquerade-bit 14, and
// --nodeport-addresses=primary when Config.NodeIP is set, else every local address.
//
// Newer kube-proxy releases (1.36 and later, as far as live `nft list` output shows)
// write the same map lookups but dispatch with `dnat ip to numgen random mod N map {...}`
// in the service chain, without endpoint chains, and replace mark-for-masquerade with a
// hairpin-connections set. This package writes the vmap form of the source it mirrors;
// the endpoint choice, a uniform numgen draw over the sorted endpoints, is the same.
func (r Rules) NftablesScript(existing []string, firstSync bool) ([]byte, error) {
	svcs, err := r.normalize()
	if err != nil {
		return nil, err
	}
	var b lineBuffer
	t := "ip " + nftablesTable
	mark := masqueradeMark
	b.WriteString(r.header("kube-proxy nftables-mode rules for nft -f"))

	// setupNFTables
	b.line("add table", t, `{ comment "rules for kube-proxy" ; }`)
	if firstSync {
		for _, bc := range nftablesBaseChains {
			b.line("add chain", t, bc.name)
			b.line("delete chain", t, bc.name)
		}
	}
	for _, bc := range nftablesBaseChains {
		b.line("add chain", t, bc.name, fmt.Sprintf("{ type %s hook %s priority %d ; }", bc.typ, bc.hook, bc.priority))
		b.line("flush chain", t, bc.name)
	}
	created := map[string]bool{}
	ensureChain := func(chain string) { // ensureChain: add and flush, once per transaction
		if created[chain] {
			return
		}
		created[chain] = true
		b.line("add chain", t, chain)
		b.line("flush chain", t, chain)
	}
	rule := func(chain string, words ...string) {
		b.line(append([]string{"add rule", t, chain}, words...)...)
	}
	for _, j := range nftablesJumpChains {
		ensureChain(j.target)
		if j.cond == "" {
			rule(j.from, "jump", j.target)
		} else {
			rule(j.from, j.cond, "jump", j.target)
		}
	}
	for _, c := range []string{servicesChain, clusterIPsCheckChain, masqueradingChain, markMasqChain} {
		ensureChain(c)
	}
	rule(markMasqChain, "mark set mark or", mark)
	rule(masqueradingChain, "mark and", mark, "== 0 return")
	rule(masqueradingChain, "mark set mark xor", mark)
	rule(masqueradingChain, "masquerade fully-random")

	b.line("add set", t, clusterIPsSet, `{ type ipv4_addr ; comment "Active ClusterIPs" ; }`)
	rule(clusterIPsCheckChain, "ip daddr @"+clusterIPsSet, "reject", `comment "Reject traffic to invalid ports of ClusterIPs"`)
	if len(r.ServiceCIDRs) > 0 {
		cidrs := make([]string, len(r.ServiceCIDRs))
		for i, c := range r.ServiceCIDRs {
			cidrs[i] = c.String()
		}
		rule(clusterIPsCheckChain, "ip daddr {", strings.Join(cidrs, ","), "} drop", `comment "Drop traffic to unallocated ClusterIPs"`)
	}

	b.line("add set", t, nodePortIPsSet, `{ type ipv4_addr ; comment "IPs that accept NodePort traffic" ; }`)
	nodePortsEverywhere := !r.NodeIP.IsValid() // nodePortAddresses.MatchAll()
	if nodePortsEverywhere {
		b.line("delete set", t, nodePortIPsSet)
	} else {
		b.line("flush set", t, nodePortIPsSet)
		if !r.NodeIP.IsLoopback() {
			b.line("add element", t, nodePortIPsSet, "{", r.NodeIP.String(), "}")
		}
	}

	b.line("add map", t, noEndpointServicesMap, `{ type ipv4_addr . inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to services with no endpoints" ; }`)
	b.line("add map", t, noEndpointNodePortsMap, `{ type inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to service nodeports with no endpoints" ; }`)
	b.line("add chain", t, rejectChain, `{ comment "helper for @no-endpoint-services / @no-endpoint-nodeports" ; }`)
	b.line("flush chain", t, rejectChain)
	rule(rejectChain, "reject")
	rule(serviceEndpointsCheckChain, "ip daddr . meta l4proto . th dport vmap @"+noEndpointServicesMap)
	if nodePortsEverywhere {
		rule(nodePortEndpointsCheckChain, "ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @"+noEndpointNodePortsMap)
	} else {
		rule(nodePortEndpointsCheckChain, "ip daddr @"+nodePortIPsSet, "meta l4proto . th dport vmap @"+noEndpointNodePortsMap)
	}

	b.line("add map", t, firewallIPsMap, `{ type ipv4_addr . inet_proto . inet_service : verdict ; comment "destinations that are subject to LoadBalancerSourceRanges" ; }`)
	ensureChain(firewallCheckChain)
	rule(firewallCheckChain, "ip daddr . meta l4proto . th dport vmap @"+firewallIPsMap)

	b.line("add map", t, serviceIPsMap, `{ type ipv4_addr . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }`)
	b.line("add map", t, serviceNodePortsMap, `{ type inet_proto . inet_service : verdict ; comment "NodePort traffic" ; }`)
	rule(servicesChain, "ip daddr . meta l4proto . th dport vmap @"+serviceIPsMap)
	if nodePortsEverywhere {
		rule(servicesChain, "fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @"+serviceNodePortsMap)
	} else {
		rule(servicesChain, "ip daddr @"+nodePortIPsSet, "meta l4proto . th dport vmap @"+serviceNodePortsMap)
	}

	// A full sync starts the sets and maps over (nftElementStorage.reset).
	b.line("flush set", t, clusterIPsSet)
	for _, m := range []string{serviceIPsMap, firewallIPsMap, noEndpointServicesMap, noEndpointNodePortsMap, serviceNodePortsMap} {
		b.line("flush map", t, m)
	}

	// syncProxyRules, per service port.
	for _, sp := range svcs {
		proto, ip, port := sp.protocol, sp.clusterIP.String(), strconv.Itoa(int(sp.port))
		svcChain := nftablesServiceChain(sp)
		for _, ep := range sp.endpoints {
			ensureChain(nftablesEndpointChain(sp, ep))
		}
		if len(sp.endpoints) > 0 {
			ensureChain(svcChain)
		}
		b.line("add element", t, clusterIPsSet, "{", ip, "}")
		key := ip + " . " + proto + " . " + port
		if len(sp.endpoints) == 0 {
			// No endpoints: reject in the filter chains, before any DNAT.
			b.line("add element", t, noEndpointServicesMap, "{", key, "comment", strconv.Quote(sp.name), ": goto", rejectChain, "}")
			continue
		}
		b.line("add element", t, serviceIPsMap, "{", key, ": goto", svcChain, "}")

		switch {
		case r.MasqueradeAll:
			rule(svcChain, "ip daddr", ip, proto, "dport", port, "jump", markMasqChain)
		case r.ClusterCIDR.IsValid():
			rule(svcChain, "ip daddr", ip, proto, "dport", port, "ip saddr !=", r.ClusterCIDR.String(), "jump", markMasqChain)
		}

		// writeServiceToEndpointRules: one numgen draw picks the endpoint.
		elems := make([]string, len(sp.endpoints))
		for i, ep := range sp.endpoints {
			elems[i] = strconv.Itoa(i) + " : goto " + nftablesEndpointChain(sp, ep)
		}
		rule(svcChain, "numgen random mod", strconv.Itoa(len(sp.endpoints)), "vmap {", strings.Join(elems, " , "), "}")

		for _, ep := range sp.endpoints {
			epChain := nftablesEndpointChain(sp, ep)
			rule(epChain, "ip saddr", ep.Addr().String(), "jump", markMasqChain)
			rule(epChain, "meta l4proto", proto, "dnat to", ep.String())
		}
	}

	// Stale per-service chains: flushed now, deleted by a later sync.
	active := nftablesActiveChains(svcs)
	stale := slices.Clone(existing)
	slices.Sort(stale)
	for _, c := range slices.Compact(stale) {
		if isNftablesServiceChain(c) && !active[c] {
			b.line("flush chain", t, c)
		}
	}
	return []byte(b.String()), nil
}

// nftablesDeleteStale returns the transaction that deletes per-service chains the rules
// do not use and an earlier sync already flushed (ruleCount 0), or nil if there are none.
// kube-proxy deletes a stale chain at the first sync at least a second after flushing
// it: before Linux 6.2 the kernel may still count a reference from the map element that
// pointed at it (syncProxyRules, staleChains).
func (r Rules) nftablesDeleteStale(ruleCount map[string]int) ([]byte, []string, error) {
	svcs, err := r.normalize()
	if err != nil {
		return nil, nil, err
	}
	active := nftablesActiveChains(svcs)
	var del []string
	for c, n := range ruleCount {
		if isNftablesServiceChain(c) && !active[c] && n == 0 {
			del = append(del, c)
		}
	}
	if len(del) == 0 {
		return nil, nil, nil
	}
	slices.Sort(del)
	var b lineBuffer
	for _, c := range del {
		b.line("delete chain", "ip "+nftablesTable, c)
	}
	return []byte(b.String()), del, nil
}
