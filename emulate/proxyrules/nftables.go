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
	tx := nftablesTx{created: map[string]bool{}}
	tx.WriteString(r.header("kube-proxy nftables-mode rules for nft -f"))

	// setupNFTables
	tx.object("add table", `{ comment "rules for kube-proxy" ; }`)
	tx.baseChains(firstSync)
	tx.jumpsAndMasquerading()
	tx.clusterIPsCheck(r.ServiceCIDRs)
	nodePortsEverywhere := !r.NodeIP.IsValid() // nodePortAddresses.MatchAll()
	tx.nodePortIPs(r.NodeIP)
	tx.noEndpointChecks(nodePortsEverywhere)
	tx.firewallCheck()
	tx.serviceDispatch(nodePortsEverywhere)

	// A full sync starts the sets and maps over (nftElementStorage.reset).
	tx.object("flush set", clusterIPsSet)
	for _, m := range []string{serviceIPsMap, firewallIPsMap, noEndpointServicesMap, noEndpointNodePortsMap, serviceNodePortsMap} {
		tx.object("flush map", m)
	}

	// syncProxyRules, per service port.
	for _, sp := range svcs {
		tx.servicePort(r, sp)
	}

	// Stale per-service chains: flushed now, deleted by a later sync.
	active := nftablesActiveChains(svcs)
	stale := slices.Clone(existing)
	slices.Sort(stale)
	for _, c := range slices.Compact(stale) {
		if isNftablesServiceChain(c) && !active[c] {
			tx.object("flush chain", c)
		}
	}
	return []byte(tx.String()), nil
}

// nftablesTx is one `nft -f` transaction on kube-proxy's table.
type nftablesTx struct {
	lineBuffer
	created map[string]bool // the regular chains added and flushed so far
}

// object writes a command on an object of the table: verb, "ip kube-proxy", words.
func (tx *nftablesTx) object(verb string, words ...string) {
	tx.line(append([]string{verb, "ip " + nftablesTable}, words...)...)
}

// rule appends a rule to chain.
func (tx *nftablesTx) rule(chain string, words ...string) {
	tx.object("add rule", append([]string{chain}, words...)...)
}

// ensureChain adds and flushes a regular chain, once per transaction (ensureChain).
func (tx *nftablesTx) ensureChain(chain string) {
	if tx.created[chain] {
		return
	}
	tx.created[chain] = true
	tx.object("add chain", chain)
	tx.object("flush chain", chain)
}

// baseChains adds and flushes the base chains; on a first sync each is first added
// and deleted, so one left with another priority is replaced.
func (tx *nftablesTx) baseChains(firstSync bool) {
	if firstSync {
		for _, bc := range nftablesBaseChains {
			tx.object("add chain", bc.name)
			tx.object("delete chain", bc.name)
		}
	}
	for _, bc := range nftablesBaseChains {
		tx.object("add chain", bc.name, fmt.Sprintf("{ type %s hook %s priority %d ; }", bc.typ, bc.hook, bc.priority))
		tx.object("flush chain", bc.name)
	}
}

// jumpsAndMasquerading writes the base chains' jumps and the chains that mark packets
// for masquerade and masquerade them.
func (tx *nftablesTx) jumpsAndMasquerading() {
	for _, j := range nftablesJumpChains {
		tx.ensureChain(j.target)
		if j.cond == "" {
			tx.rule(j.from, "jump", j.target)
		} else {
			tx.rule(j.from, j.cond, "jump", j.target)
		}
	}
	for _, c := range []string{servicesChain, clusterIPsCheckChain, masqueradingChain, markMasqChain} {
		tx.ensureChain(c)
	}
	mark := masqueradeMark
	tx.rule(markMasqChain, "mark set mark or", mark)
	tx.rule(masqueradingChain, "mark and", mark, "== 0 return")
	tx.rule(masqueradingChain, "mark set mark xor", mark)
	tx.rule(masqueradingChain, "masquerade fully-random")
}

// clusterIPsCheck rejects traffic to a ClusterIP's unserved ports and drops traffic to
// unallocated addresses of the service CIDRs.
func (tx *nftablesTx) clusterIPsCheck(serviceCIDRs []netip.Prefix) {
	tx.object("add set", clusterIPsSet, `{ type ipv4_addr ; comment "Active ClusterIPs" ; }`)
	tx.rule(clusterIPsCheckChain, "ip daddr @"+clusterIPsSet, "reject", `comment "Reject traffic to invalid ports of ClusterIPs"`)
	if len(serviceCIDRs) > 0 {
		cidrs := make([]string, len(serviceCIDRs))
		for i, c := range serviceCIDRs {
			cidrs[i] = c.String()
		}
		tx.rule(clusterIPsCheckChain, "ip daddr {", strings.Join(cidrs, ","), "} drop", `comment "Drop traffic to unallocated ClusterIPs"`)
	}
}

// nodePortIPs writes the set of addresses that accept NodePort traffic: nodeIP, or
// none (the set deleted) when every local address does.
func (tx *nftablesTx) nodePortIPs(nodeIP netip.Addr) {
	tx.object("add set", nodePortIPsSet, `{ type ipv4_addr ; comment "IPs that accept NodePort traffic" ; }`)
	if !nodeIP.IsValid() {
		tx.object("delete set", nodePortIPsSet)
		return
	}
	tx.object("flush set", nodePortIPsSet)
	if !nodeIP.IsLoopback() {
		tx.object("add element", nodePortIPsSet, "{", nodeIP.String(), "}")
	}
}

// noEndpointChecks writes the maps and chains that reject connections to Services
// and NodePorts without endpoints.
func (tx *nftablesTx) noEndpointChecks(nodePortsEverywhere bool) {
	tx.object("add map", noEndpointServicesMap, `{ type ipv4_addr . inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to services with no endpoints" ; }`)
	tx.object("add map", noEndpointNodePortsMap, `{ type inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to service nodeports with no endpoints" ; }`)
	tx.object("add chain", rejectChain, `{ comment "helper for @no-endpoint-services / @no-endpoint-nodeports" ; }`)
	tx.object("flush chain", rejectChain)
	tx.rule(rejectChain, "reject")
	tx.rule(serviceEndpointsCheckChain, "ip daddr . meta l4proto . th dport vmap @"+noEndpointServicesMap)
	if nodePortsEverywhere {
		tx.rule(nodePortEndpointsCheckChain, "ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @"+noEndpointNodePortsMap)
	} else {
		tx.rule(nodePortEndpointsCheckChain, "ip daddr @"+nodePortIPsSet, "meta l4proto . th dport vmap @"+noEndpointNodePortsMap)
	}
}

// firewallCheck writes the LoadBalancerSourceRanges map and its chain.
func (tx *nftablesTx) firewallCheck() {
	tx.object("add map", firewallIPsMap, `{ type ipv4_addr . inet_proto . inet_service : verdict ; comment "destinations that are subject to LoadBalancerSourceRanges" ; }`)
	tx.ensureChain(firewallCheckChain)
	tx.rule(firewallCheckChain, "ip daddr . meta l4proto . th dport vmap @"+firewallIPsMap)
}

// serviceDispatch writes the maps that send ClusterIP and NodePort traffic to its
// service chain, and the services chain's lookups in them.
func (tx *nftablesTx) serviceDispatch(nodePortsEverywhere bool) {
	tx.object("add map", serviceIPsMap, `{ type ipv4_addr . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }`)
	tx.object("add map", serviceNodePortsMap, `{ type inet_proto . inet_service : verdict ; comment "NodePort traffic" ; }`)
	tx.rule(servicesChain, "ip daddr . meta l4proto . th dport vmap @"+serviceIPsMap)
	if nodePortsEverywhere {
		tx.rule(servicesChain, "fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @"+serviceNodePortsMap)
	} else {
		tx.rule(servicesChain, "ip daddr @"+nodePortIPsSet, "meta l4proto . th dport vmap @"+serviceNodePortsMap)
	}
}

// servicePort writes one service port's map elements and, if it has endpoints, its
// service and endpoint chains (syncProxyRules' loop over the service map).
func (tx *nftablesTx) servicePort(r Rules, sp servicePort) {
	proto, ip, port := sp.protocol, sp.clusterIP.String(), strconv.Itoa(int(sp.port))
	svcChain := nftablesServiceChain(sp)
	for _, ep := range sp.endpoints {
		tx.ensureChain(nftablesEndpointChain(sp, ep))
	}
	if len(sp.endpoints) > 0 {
		tx.ensureChain(svcChain)
	}
	tx.object("add element", clusterIPsSet, "{", ip, "}")
	key := ip + " . " + proto + " . " + port
	if len(sp.endpoints) == 0 {
		// No endpoints: reject in the filter chains, before any DNAT.
		tx.object("add element", noEndpointServicesMap, "{", key, "comment", strconv.Quote(sp.name), ": goto", rejectChain, "}")
		return
	}
	tx.object("add element", serviceIPsMap, "{", key, ": goto", svcChain, "}")

	switch {
	case r.MasqueradeAll:
		tx.rule(svcChain, "ip daddr", ip, proto, "dport", port, "jump", markMasqChain)
	case r.ClusterCIDR.IsValid():
		tx.rule(svcChain, "ip daddr", ip, proto, "dport", port, "ip saddr !=", r.ClusterCIDR.String(), "jump", markMasqChain)
	}

	// writeServiceToEndpointRules: one numgen draw picks the endpoint.
	elems := make([]string, len(sp.endpoints))
	for i, ep := range sp.endpoints {
		elems[i] = strconv.Itoa(i) + " : goto " + nftablesEndpointChain(sp, ep)
	}
	tx.rule(svcChain, "numgen random mod", strconv.Itoa(len(sp.endpoints)), "vmap {", strings.Join(elems, " , "), "}")

	for _, ep := range sp.endpoints {
		epChain := nftablesEndpointChain(sp, ep)
		tx.rule(epChain, "ip saddr", ep.Addr().String(), "jump", markMasqChain)
		tx.rule(epChain, "meta l4proto", proto, "dnat to", ep.String())
	}
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
