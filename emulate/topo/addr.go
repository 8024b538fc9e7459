package topo

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
)

// Reserved is the address range every emulated cluster lives in: RFC 2544's
// benchmarking range, 198.18.0.0/15, set aside for testing network devices and never
// routed on the internet, so it is unlikely to be in use on the host (Build checks).
//
//	198.18.0.0/24      the fabric between nodes: node i is 198.18.0.(i+1)
//	198.18.(i+1).0/24  node i's pod CIDR: its pods from .2 up
//	198.19.0.0/16      Service ClusterIPs (never on an interface: kube-proxy DNATs them)
var Reserved = netip.MustParsePrefix("198.18.0.0/15")

var (
	fabricNet  = netip.MustParsePrefix("198.18.0.0/24")
	serviceNet = netip.MustParsePrefix("198.19.0.0/16")
	// podGateway is the pods' next hop, as Calico sets it: a link-local address that
	// the node side of each pod's veth answers ARP for (proxy_arp), so every pod
	// packet, even to a pod on the same node, goes through the node's IP stack and
	// its kube-proxy rules, as in a routed CNI.
	podGateway = netip.MustParseAddr("169.254.1.1")
)

// Limits of the address plan.
const (
	MaxNodes       = 253
	MaxPodsPerNode = 253
	MaxServices    = 65534
)

func nodeAddr(i int) netip.Addr {
	a := fabricNet.Addr().As4()
	a[3] = byte(i + 1)
	return netip.AddrFrom4(a)
}

func podCIDR(node int) netip.Prefix {
	a := fabricNet.Addr().As4()
	a[2] = byte(node + 1)
	return netip.PrefixFrom(netip.AddrFrom4(a), 24)
}

func podAddr(node, slot int) netip.Addr {
	a := podCIDR(node).Addr().As4()
	a[3] = byte(slot + 2)
	return netip.AddrFrom4(a)
}

// ServiceIP is the ClusterIP of the i-th Service.
func ServiceIP(i int) netip.Addr {
	a := serviceNet.Addr().As4()
	n := i + 1
	a[2], a[3] = byte(n>>8), byte(n)
	return netip.AddrFrom4(a)
}

// checkHostFree refuses to build when the host already has an address or a route
// inside Reserved: the emulated cluster must not shadow, or be shadowed by, a
// network that exists. The default route (prefix length 0) covers everything and is
// not a conflict: no emulated packet leaves the namespaces.
func checkHostFree() error {
	var conflicts []string
	for _, args := range [][]string{{"-o", "-4", "addr", "show"}, {"-4", "route", "show", "table", "all"}} {
		ctx, cancel := context.WithTimeout(context.Background(), ipTimeout)
		out, err := exec.CommandContext(ctx, "ip", args...).Output()
		cancel()
		if err != nil {
			return fmt.Errorf("ip %s: %v", strings.Join(args, " "), err)
		}
		conflicts = append(conflicts, overlapping(out)...)
	}
	if len(conflicts) > 0 {
		return fmt.Errorf("the host already uses addresses in %s, which emulate reserves for its clusters: %s",
			Reserved, strings.Join(conflicts, "; "))
	}
	return nil
}

// overlapping returns the lines of ip's output that name a prefix or address
// overlapping Reserved.
func overlapping(out []byte) []string {
	var found []string
	for _, line := range bytes.Split(out, []byte("\n")) {
		for _, field := range strings.Fields(string(line)) {
			p, err := netip.ParsePrefix(field)
			if err != nil {
				a, aerr := netip.ParseAddr(field)
				if aerr != nil || !a.Is4() {
					continue
				}
				p = netip.PrefixFrom(a, 32)
			}
			if p.Bits() > 0 && p.Overlaps(Reserved) {
				found = append(found, strings.TrimSpace(string(line)))
				break
			}
		}
	}
	return found
}
