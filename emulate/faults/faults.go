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
)

// Directions of a fault, as Chaos Mesh's NetworkChaos names them: to the pod, from
// it, or both.
const (
	To   = "to"
	From = "from"
	Both = "both"
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
	fmt.Fprintf(&b, "table inet %s {\n\tchain forward {\n", table)
	// Before kube-proxy's filter chains (priority 0): a dropped packet is lost on the
	// wire, before anything on the node sees it.
	b.WriteString("\t\ttype filter hook forward priority -10; policy accept;\n")
	for _, l := range losses {
		if l.Fraction < 0 || l.Fraction > 1 || l.Veth == "" {
			return "", fmt.Errorf("loss %+v: want a veth and a fraction from 0 to 1", l)
		}
		n := int(math.Round(l.Fraction * resolution))
		var matches []string
		switch l.Direction {
		case To:
			matches = []string{"oifname"}
		case From:
			matches = []string{"iifname"}
		case Both, "":
			matches = []string{"oifname", "iifname"}
		default:
			return "", fmt.Errorf("loss direction %q: want to, from or both", l.Direction)
		}
		for _, m := range matches {
			fmt.Fprintf(&b, "\t\t%s %q numgen random mod %d < %d drop\n", m, l.Veth, resolution, n)
		}
	}
	b.WriteString("\t}\n}\n")
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
