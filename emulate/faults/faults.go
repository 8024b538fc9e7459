// Package faults breaks an emulated cluster's network with what this kernel has:
// packet loss as an nftables rule (numgen random), since tc netem is not available.
// Rules go in a table of their own in a node's namespace, on the node's end of a
// pod's veth, so they touch nothing kube-proxy writes and die with the namespace.
package faults

import (
	"context"
	"fmt"
	"math"
	"strings"

	"trafficlab/emulate/topo"
	"trafficlab/scenario"
)

// Directions of a fault, as Chaos Mesh's NetworkChaos and the scenario
// (scenario.DirectionTo) name them: To is the packets the pod sends, From the
// packets it receives, Both either.
const (
	To   = scenario.DirectionTo
	From = scenario.DirectionFrom
	Both = scenario.DirectionBoth
)

// Loss drops a fraction of the packets crossing a pod's veth on its node.
type Loss struct {
	// Veth is the node's end of the pod's veth (topo.Pod.Veth).
	Veth      string
	Direction string
	Fraction  float64 // 0.03 for 3 %
}

// resolution is the denominator of numgen's draw: loss is applied in steps of
// 0.01 %, finer than any scenario writes it.
const resolution = 10000

// table is the nftables table faults own in a node's namespace.
const table = "trafficlab_faults"

// Script is the nft script that makes a node's losses exactly these: it deletes
// the table faults left before and writes them anew. Each packet that crosses a
// listed veth draws numgen random mod 10000 and is dropped under the fraction: every
// packet independently, as netem's loss without correlation.
func Script(losses []Loss) (string, error) {
	var b strings.Builder
	// "add" then "delete" starts from no table whether or not one existed.
	fmt.Fprintf(&b, "add table inet %s\ndelete table inet %s\n", table, table)
	if len(losses) == 0 {
		return b.String(), nil
	}
	// Two chains, so that every packet crossing the veth is seen once whether the
	// node forwards it or is its end (a userspace kube-proxy's connections start
	// and end on the node): what the pod sends, as it enters the node, before
	// conntrack (priority -300) and anything else sees it; what it receives, as it
	// leaves the node, after every other rule. Both are the wire.
	var sends, receives []string
	for _, l := range losses {
		if l.Fraction < 0 || l.Fraction > 1 || l.Veth == "" {
			return "", fmt.Errorf("loss %+v: want a veth and a fraction from 0 to 1", l)
		}
		rule := fmt.Sprintf("%q numgen random mod %d < %d drop", l.Veth, resolution, int(math.Round(l.Fraction*resolution)))
		switch l.Direction {
		case To:
			sends = append(sends, rule)
		case From:
			receives = append(receives, rule)
		case Both, "":
			sends, receives = append(sends, rule), append(receives, rule)
		default:
			return "", fmt.Errorf("loss direction %q: want to, from or both", l.Direction)
		}
	}
	fmt.Fprintf(&b, "table inet %s {\n", table)
	chain := func(name, hook string, priority int, match string, rules []string) {
		fmt.Fprintf(&b, "\tchain %s {\n\t\ttype filter hook %s priority %d; policy accept;\n", name, hook, priority)
		for _, r := range rules {
			fmt.Fprintf(&b, "\t\t%s %s\n", match, r)
		}
		b.WriteString("\t}\n")
	}
	chain("pod_sends", "prerouting", -310, "iifname", sends)
	chain("pod_receives", "postrouting", 310, "oifname", receives)
	b.WriteString("}\n")
	return b.String(), nil
}

// Apply makes the losses of the node whose namespace is ns exactly these.
func Apply(ctx context.Context, ns string, losses []Loss) error {
	script, err := Script(losses)
	if err != nil {
		return err
	}
	return topo.Exec(ctx, ns, []byte(script), "nft", "-f", "-")
}
