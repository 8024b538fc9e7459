package network

import (
	"math"

	"trafficlab/model/netw"
	"trafficlab/scenario"
	"trafficlab/sim"
	"trafficlab/simulate/faults"
)

// path is the direction from → to, made on first use with its own random stream.
func (n *Network) path(from, to End) *netw.Path {
	k := pathKey{from, to}
	if p, ok := n.paths[k]; ok {
		return p
	}
	p := netw.NewPath(sim.Stream(n.cfg.Seed, "link/"+n.ends.Name(from)+">"+n.ends.Name(to)))
	n.configure(p, from, to)
	n.paths[k] = p
	n.pathKeys = append(n.pathKeys, k)
	return p
}

// Reconfigure sets every path as the network, its links and the faults active now
// make it: a network fault started or ended.
func (n *Network) Reconfigure() {
	for _, k := range n.pathKeys {
		n.configure(n.paths[k], k.from, k.to)
	}
}

// applies tells whether a rule with target, peer and direction covers packets from → to,
// with Chaos Mesh's meaning of direction: "to" is what the target sends.
func (n *Network) applies(target *scenario.Selector, peer *scenario.Selector, dir string, from, to End) bool {
	sends := n.ends.Matches(target, from) && (peer == nil || n.ends.Matches(peer, to))
	receives := n.ends.Matches(target, to) && (peer == nil || n.ends.Matches(peer, from))
	switch dir {
	case scenario.DirectionTo:
		return sends
	case scenario.DirectionFrom:
		return receives
	}
	return sends || receives
}

// configure sets path from → to as the cluster's network, the link overrides (later
// ones win, field by field) and the faults active now make it.
func (n *Network) configure(p *netw.Path, from, to End) {
	nw := n.cfg.Spec
	p.Reset().Latency = sim.Duration(nw.Latency.Duration) + n.cfg.Relay
	// Traffic between nodes crosses the sender's and the receiver's interfaces.
	if fn, tn := n.ends.Node(from), n.ends.Node(to); fn != tn {
		out, _ := n.ends.NICs(fn)
		_, in := n.ends.NICs(tn)
		p.Egress, p.Ingress = out, in
	}
	setLink(p, &scenario.Link{Jitter: nw.Jitter, JitterDistribution: nw.JitterDistribution,
		Bandwidth: nw.Bandwidth, Loss: nw.Loss, Correlation: nw.Correlation, GilbertElliott: nw.GilbertElliott})
	for i := range nw.Links {
		o := &nw.Links[i]
		if n.applies(&o.Target, o.Peer, o.Direction, from, to) {
			setLink(p, &o.Link)
		}
	}
	now := n.k.Now()
	for i := range n.cfg.Faults {
		f := &n.cfg.Faults[i]
		if !faults.ActiveOnNetwork(f, now) || !n.applies(&f.Target, f.Peer, f.Direction, from, to) {
			continue
		}
		addFault(p, f)
	}
}

func setLink(p *netw.Path, l *scenario.Link) {
	if l.Latency != nil {
		p.Latency = sim.Duration(l.Latency.Duration)
	}
	if l.Jitter != nil {
		p.Jitter = sim.Duration(l.Jitter.Duration)
		p.Normal = l.JitterDistribution == scenario.JitterNormal
	}
	if l.Bandwidth != nil {
		p.BitsPerSecond = l.Bandwidth.BitsPerSecond
	}
	if l.Loss != nil {
		p.Loss = l.Loss.Fraction
		p.Correlation = 0
		if l.Correlation != nil {
			p.Correlation = l.Correlation.Fraction
		}
		p.GilbertElliott = nil
	}
	if g := l.GilbertElliott; g != nil {
		p.Loss, p.Correlation = 0, 0
		p.GilbertElliott = &netw.GilbertElliott{P: g.P.Fraction, R: g.R.Fraction, BadLoss: g.BadLoss.Fraction, GoodLoss: g.GoodLoss.Fraction}
	}
}

// addFault puts a fault in series with what the path already does: losses compound,
// delays add, the narrower bandwidth wins, a partition drops everything. That is what
// a netem or tbf qdisc on the pod's interface does on top of the network's own
// behaviour.
func addFault(p *netw.Path, f *scenario.Fault) {
	switch f.Kind {
	case scenario.FaultLoss:
		p.Loss = 1 - (1-p.Loss)*(1-f.Loss.Fraction)
		if f.Correlation != nil {
			p.Correlation = f.Correlation.Fraction
		}
	case scenario.FaultDelay:
		p.Latency += sim.Duration(f.Latency.Duration)
		if f.Jitter != nil {
			p.Jitter = sim.Time(math.Hypot(float64(p.Jitter), float64(f.Jitter.Duration)))
		}
	case scenario.FaultBandwidth:
		if p.BitsPerSecond == 0 || f.Rate.BitsPerSecond < p.BitsPerSecond {
			p.BitsPerSecond = f.Rate.BitsPerSecond
		}
	case scenario.FaultPartition:
		p.Loss, p.Correlation, p.GilbertElliott = 1, 0, nil
	}
}
