package delay

import (
	"fmt"
	"strings"

	"trafficlab/emulate/faults"
)

// chainPrefix starts the name of every chain a Delayer writes; the run's process id
// and a sequence number follow, so two Delayers in one namespace never share a chain
// and a leftover is easy to find (`iptables-save | grep TL-DELAY-`).
const chainPrefix = "TL-DELAY-"

// iptablesWait is iptables' -w: wait this many seconds for the xtables lock.
const iptablesWait = "5"

// hook is where one direction's packets are queued. Packets a pod sends are queued
// in raw PREROUTING, before conntrack and routing see them, as a delay on the wire
// into the node would hold them. Packets a pod receives are queued in mangle
// POSTROUTING, after everything on the node (kube-proxy's DNAT, forwarding or a local
// socket's output) and just before the veth, where netem on the veth would hold them.
// Both hooks see forwarded packets and the node's own, so a node-local proxy's
// traffic is delayed too. The kube-proxy rules emulate writes (package proxyrules)
// are in nat and filter only, so neither table is shared with them.
type hook struct {
	table, chain, match string
	// nf is the hook number nfqueue reports for packets queued here.
	nf uint8
}

// Netfilter hook numbers (enum nf_inet_hooks, include/uapi/linux/netfilter.h).
const (
	nfPreRouting  = 0
	nfPostRouting = 4
)

var hooks = map[string]hook{
	faults.To:   {table: "raw", chain: "PREROUTING", match: "-i", nf: nfPreRouting},
	faults.From: {table: "mangle", chain: "POSTROUTING", match: "-o", nf: nfPostRouting},
}

// restoreScript is the iptables-restore --noflush input that adds the run's chain to
// each table it needs, queueing the rules' packets to queue, or with undo removes it.
// --queue-bypass accepts packets when no program is bound to the queue (iptables-
// extensions(8), NFQUEUE): a Delayer that died without its Close leaves packets
// undelayed rather than dropped.
func restoreScript(chain string, queue uint16, rules []rule, undo bool) []byte {
	var b strings.Builder
	for _, dir := range []string{faults.To, faults.From} {
		h := hooks[dir]
		var vs []string
		for _, r := range rules {
			if r.dir == dir {
				vs = append(vs, r.veth)
			}
		}
		if len(vs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "*%s\n", h.table)
		if undo {
			fmt.Fprintf(&b, "-D %s -j %s\n-F %s\n-X %s\n", h.chain, chain, chain, chain)
		} else {
			fmt.Fprintf(&b, ":%s - [0:0]\n", chain)
			for _, v := range vs {
				fmt.Fprintf(&b, "-A %s %s %s -j NFQUEUE --queue-num %d --queue-bypass\n", chain, h.match, v, queue)
			}
			fmt.Fprintf(&b, "-I %s -j %s\n", h.chain, chain)
		}
		b.WriteString("COMMIT\n")
	}
	return []byte(b.String())
}
