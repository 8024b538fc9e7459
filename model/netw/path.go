package netw

import (
	"math"
	"math/rand/v2"

	"trafficlab/sim"
)

// Path is one direction of a hop: what tc netem (delay, jitter, loss) and a tbf-like
// rate limiter do to the packets that enter it. The engine owns one per direction and
// may change the exported parameters at any time (timed faults); the queue and loss
// state stay.
type Path struct {
	// Latency is the one-way propagation delay.
	Latency sim.Time
	// Jitter is netem's jitter: each packet's delay is Latency plus a draw uniform in
	// ±Jitter, or normal with standard deviation Jitter when Normal, never below 0.
	// Each packet gets its own delay, so packets can overtake each other, as they do
	// in netem's time-sorted queue (net/sched/sch_netem.c netem_enqueue, tfifo_enqueue).
	Jitter sim.Time
	Normal bool
	// BitsPerSecond, when not 0, serialises packets FIFO at this rate before the
	// delay: an unbounded tbf-like bottleneck queue.
	BitsPerSecond float64
	// Loss is the long-run probability that a packet is dropped.
	Loss float64
	// Correlation makes losses come in bursts with a two-state Markov chain (a simple
	// Gilbert model): P(loss | previous lost) = c + (1-c)·Loss and
	// P(loss | previous kept) = (1-c)·Loss. Its stationary loss rate is π with
	// π = π(c + (1-c)Loss) + (1-π)(1-c)Loss, so π = Loss whatever c, and a burst lasts
	// 1/(1 - c - (1-c)Loss) packets on average. (netem's own correlated generator,
	// sch_netem.c get_crandom, does not keep the mean; this model deliberately does.)
	Correlation float64
	// GilbertElliott, when set, replaces Loss and Correlation with netem's
	// four-parameter burst model (loss gemodel p r 1-h 1-k).
	GilbertElliott *GilbertElliott

	// Egress and Ingress, when set, are the network interfaces of the sending and
	// the receiving node, shared with the other paths that cross them.
	Egress, Ingress *NIC

	busy     sim.Time // the serialisation queue is busy until then
	bad      bool     // Gilbert-Elliott state
	lastLost bool     // state of the loss chain
	rng      *rand.Rand
	drop     func() bool // test hook: when it returns true the packet is dropped
}

// NewPath returns a path with no delay, jitter, loss or rate limit, drawing from rng
// (a stream from sim.Stream).
func NewPath(rng *rand.Rand) *Path { return &Path{rng: rng} }

// Reset zeroes the parameters and keeps the queue, loss-chain and random state, so that
// a path can be reconfigured in place (*p = *p.Reset() then set fields). It returns p.
func (p *Path) Reset() *Path {
	p.Latency, p.Jitter, p.Normal, p.BitsPerSecond, p.Loss, p.Correlation = 0, 0, false, 0, 0, 0
	p.GilbertElliott, p.Egress, p.Ingress = nil, nil, nil
	return p
}

// Transit puts a packet of bytes (headers included) on the path at now and returns when
// it arrives, or lost. A lost packet is dropped on entry, as netem drops at enqueue, so
// it does not occupy the bottleneck.
func (p *Path) Transit(now sim.Time, bytes int) (arrive sim.Time, lost bool) {
	if p.lose() {
		return 0, true
	}
	t := now
	if p.BitsPerSecond > 0 {
		if p.busy > t {
			t = p.busy
		}
		t += transmission(bytes, p.BitsPerSecond)
		p.busy = t
	}
	if p.Egress != nil {
		t = p.Egress.send(t, bytes)
	}
	d := p.Latency
	if p.Jitter > 0 {
		var j float64
		if p.Normal {
			j = p.rng.NormFloat64() * float64(p.Jitter)
		} else {
			j = (2*p.rng.Float64() - 1) * float64(p.Jitter)
		}
		d += sim.Time(math.Round(j))
		if d < 0 {
			d = 0
		}
	}
	if p.Ingress != nil {
		return p.Ingress.send(t+d, bytes), false
	}
	return t + d, false
}

func transmission(bytes int, bitsPerSecond float64) sim.Time {
	return sim.Time(math.Round(float64(bytes) * 8e9 / bitsPerSecond))
}

// NIC is one direction of a node's network interface: a FIFO that serialises the
// packets of every path crossing it at its rate, as a cloud instance's bandwidth
// limit does. Packets are served in the order they are handed to it; on the
// receiving side that is their sending order, which differs from their arrival
// order only when jitter reorders them.
type NIC struct {
	BitsPerSecond float64
	busy          sim.Time // the queue is busy until then
	// Busy is the time spent transmitting; Bytes the bytes sent; MaxWait the longest
	// a packet queued.
	Busy    sim.Time
	Bytes   int64
	MaxWait sim.Time
}

// send queues a packet of bytes arriving at t and returns when its last bit leaves.
func (n *NIC) send(t sim.Time, bytes int) sim.Time {
	start := max(t, n.busy)
	n.MaxWait = max(n.MaxWait, start-t)
	tx := transmission(bytes, n.BitsPerSecond)
	n.busy = start + tx
	n.Busy += tx
	n.Bytes += int64(bytes)
	return n.busy
}

// lose steps the loss models; it draws random numbers only when the path is lossy. A
// Gilbert-Elliott model and a loss rate (a fault over a bursty link) act in series.
func (p *Path) lose() bool {
	if p.drop != nil && p.drop() {
		return true
	}
	burst := false
	if ge := p.GilbertElliott; ge != nil {
		burst = ge.step(&p.bad, p.rng)
	}
	switch {
	case p.Loss <= 0:
		p.lastLost = false
	case p.Loss >= 1:
		p.lastLost = true
	default:
		q := (1 - p.Correlation) * p.Loss
		if p.lastLost {
			q += p.Correlation
		}
		p.lastLost = p.rng.Float64() < q
	}
	return burst || p.lastLost
}

// GilbertElliott is netem's Gilbert-Elliott loss model: a good and a bad state, P the
// chance to go bad and R to recover at each packet, and each state's own loss rate.
// Its long-run loss is (R·GoodLoss + P·BadLoss)/(P+R), and with BadLoss 1 and
// GoodLoss 0 a burst lasts 1/R packets on average.
type GilbertElliott struct {
	P, R              float64
	BadLoss, GoodLoss float64 // netem's 1-h and 1-k
}

// step decides one packet as net/sched/sch_netem.c loss_gilb_ell does: the state may
// change first, and the packet is lost with the loss rate of the state it found.
func (g *GilbertElliott) step(bad *bool, rng *rand.Rand) bool {
	if !*bad {
		if rng.Float64() < g.P {
			*bad = true
		}
		return rng.Float64() < g.GoodLoss
	}
	if rng.Float64() < g.R {
		*bad = false
	}
	return rng.Float64() < g.BadLoss
}
