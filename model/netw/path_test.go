package netw

import (
	"math"
	"testing"
	"time"

	"trafficlab/sim"
)

// Bernoulli loss: the count of n losses is binomial, within 4 standard deviations.
func TestPathBernoulliLoss(t *testing.T) {
	for _, p := range []float64{0.001, 0.03, 0.2} {
		path := NewPath(sim.Stream(3, "loss"))
		path.Loss = p
		const n = 100000
		lost := 0
		for i := 0; i < n; i++ {
			if _, l := path.Transit(0, 100); l {
				lost++
			}
		}
		if dev := math.Abs(float64(lost) - n*p); dev > 4*math.Sqrt(n*p*(1-p)) {
			t.Fatalf("p=%v: %d lost of %d, %.1f from the mean", p, lost, n, dev)
		}
	}
}

// Gilbert loss: the stationary rate stays Loss; the count's variance is the binomial
// one times (1+λ)/(1-λ), λ = P(L|L) - P(L|K) = c being the chain's second eigenvalue;
// bursts are geometric with mean 1/(1 - P(L|L)).
func TestPathCorrelatedLoss(t *testing.T) {
	for _, tc := range []struct{ p, c float64 }{{0.03, 0.25}, {0.05, 0.5}, {0.1, 0.8}} {
		path := NewPath(sim.Stream(4, "burst"))
		path.Loss, path.Correlation = tc.p, tc.c
		const n = 100000
		lost, bursts, run := 0, 0, 0
		var lengths []int
		for i := 0; i < n; i++ {
			if _, l := path.Transit(0, 100); l {
				lost++
				run++
			} else if run > 0 {
				lengths = append(lengths, run)
				bursts++
				run = 0
			}
		}
		sd := math.Sqrt(n * tc.p * (1 - tc.p) * (1 + tc.c) / (1 - tc.c))
		if dev := math.Abs(float64(lost) - n*tc.p); dev > 4*sd {
			t.Fatalf("%+v: %d lost, %.1f from the mean (sd %.1f)", tc, lost, dev, sd)
		}
		stay := tc.c + (1-tc.c)*tc.p // P(loss | previous lost)
		q := 1 - stay
		mean := 0.0
		for _, l := range lengths {
			mean += float64(l)
		}
		mean /= float64(len(lengths))
		// a geometric length has sd √(1-q)/q; over independent bursts:
		if sdm := math.Sqrt(1-q) / q / math.Sqrt(float64(bursts)); math.Abs(mean-1/q) > 4*sdm {
			t.Fatalf("%+v: mean burst %.3f, want %.3f ± %.3f", tc, mean, 1/q, 4*sdm)
		}
	}
}

// Bandwidth: N packets of S bytes entering at once arrive S·8/rate apart, after the
// latency; the queue persists across calls.
func TestPathBandwidth(t *testing.T) {
	path := NewPath(sim.Stream(5, "bw"))
	path.Latency, path.BitsPerSecond = sim.Duration(time.Millisecond), 12e6
	const S = 1500 // 1 ms at 12 Mbit/s
	ser := sim.Duration(time.Millisecond)
	for i := 0; i < 10; i++ {
		at, lost := path.Transit(0, S)
		if lost || at != path.Latency+sim.Time(i+1)*ser {
			t.Fatalf("packet %d arrives %v (lost %v), want %v", i, at, lost, path.Latency+sim.Time(i+1)*ser)
		}
	}
	// After the queue drains, a packet waits only for its own serialisation.
	if at, _ := path.Transit(sim.Duration(time.Second), S); at != sim.Duration(time.Second)+ser+path.Latency {
		t.Fatalf("idle queue: arrives %v", at)
	}
}

// Two paths out of one node share its NIC: their packets leave one after the other
// at the NIC's rate (1 ms each at 12 Mbit/s), then cross 1 ms of wire. Into a node,
// packets of two senders queue at its NIC after the wire. Each path's own rate
// limit comes first.
func TestNICIsShared(t *testing.T) {
	ms := sim.Duration(time.Millisecond)
	const S = 1500
	cases := []struct {
		name     string
		out, in  bool
		ownRate  float64
		arrivals []sim.Time // packets sent at 0 on a, b, a, b
	}{
		{"egress", true, false, 0, []sim.Time{2 * ms, 3 * ms, 4 * ms, 5 * ms}},
		{"ingress", false, true, 0, []sim.Time{2 * ms, 3 * ms, 4 * ms, 5 * ms}},
		// Both NICs: the ingress queue sees packets already spaced by the egress.
		{"both", true, true, 0, []sim.Time{3 * ms, 4 * ms, 5 * ms, 6 * ms}},
		// Each path's own limit at 6 Mbit/s (2 ms a packet) spaces its packets first;
		// the NIC interleaves the two paths' packets.
		{"behind own limit", true, false, 6e6, []sim.Time{4 * ms, 5 * ms, 6 * ms, 7 * ms}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, in := &NIC{BitsPerSecond: 12e6}, &NIC{BitsPerSecond: 12e6}
			a, b := NewPath(sim.Stream(1, "a")), NewPath(sim.Stream(1, "b"))
			for _, p := range []*Path{a, b} {
				p.Latency, p.BitsPerSecond = ms, tc.ownRate
				if tc.out {
					p.Egress = out
				}
				if tc.in {
					p.Ingress = in
				}
			}
			for i, p := range []*Path{a, b, a, b} {
				if at, _ := p.Transit(0, S); at != tc.arrivals[i] {
					t.Errorf("packet %d arrives at %v, want %v", i, at, tc.arrivals[i])
				}
			}
			nic := out
			if !tc.out {
				nic = in
			}
			if nic.Bytes != 4*S || nic.Busy != 4*ms {
				t.Errorf("NIC sent %d bytes in %v busy, want %d in 4ms", nic.Bytes, nic.Busy, 4*S)
			}
			// Reset forgets which NICs a path crosses: the engine sets them again.
			if a.Reset(); a.Egress != nil || a.Ingress != nil {
				t.Error("Reset kept the NICs")
			}
		})
	}
}

// Jitter: uniform delays stay within Latency ± J with mean Latency (sd J/√3); normal
// delays have mean Latency and sd J; delays never go below 0; packets get reordered.
func TestPathJitter(t *testing.T) {
	const n = 100000
	L, J := sim.Duration(time.Millisecond), sim.Duration(300*time.Microsecond)
	for _, normal := range []bool{false, true} {
		path := NewPath(sim.Stream(6, "jitter"))
		path.Latency, path.Jitter, path.Normal = L, J, normal
		var sum, sum2 float64
		reordered := 0
		prev := sim.Time(-1)
		for i := 0; i < n; i++ {
			now := sim.Time(i) * 1000
			at, _ := path.Transit(now, 100)
			d := float64(at - now)
			if !normal && (at-now < L-J || at-now > L+J) {
				t.Fatalf("uniform delay %v outside %v ± %v", at-now, L, J)
			}
			if at < prev {
				reordered++
			}
			prev = at
			sum += d
			sum2 += d * d
		}
		mean := sum / n
		sd := float64(J) / math.Sqrt(3)
		if normal {
			sd = float64(J)
		}
		if math.Abs(mean-float64(L)) > 4*sd/math.Sqrt(n) {
			t.Fatalf("normal=%v: mean delay %.0f, want %v", normal, mean, L)
		}
		if got := math.Sqrt(sum2/n - mean*mean); math.Abs(got-sd) > 0.02*sd {
			t.Fatalf("normal=%v: sd %.0f, want %.0f", normal, got, sd)
		}
		if reordered == 0 {
			t.Fatalf("normal=%v: no packet was reordered", normal)
		}
	}
	path := NewPath(sim.Stream(7, "clamp"))
	path.Jitter, path.Normal = J, true
	for i := 0; i < 1000; i++ {
		if at, _ := path.Transit(5, 100); at < 5 {
			t.Fatalf("negative delay: arrives %v", at)
		}
	}
}

func TestPathReset(t *testing.T) {
	p := NewPath(sim.Stream(8, "s"))
	p.Latency = 7
	if at, lost := p.Transit(10, 1500); at != 17 || lost {
		t.Fatalf("latency alone: arrives %v lost %v, want 17", at, lost)
	}
	p.Loss, p.Jitter, p.BitsPerSecond, p.Correlation, p.Normal = 0.01, 3, 1e6, 0.5, true
	p.Reset()
	if p.Latency != 0 || p.Jitter != 0 || p.Normal || p.BitsPerSecond != 0 || p.Loss != 0 || p.Correlation != 0 {
		t.Fatalf("Reset left parameters: %+v", *p)
	}
}

// Gilbert-Elliott as netem runs it: with p = 1 %, r = 25 %, a bad state that loses
// everything and a good one that loses nothing, the loss rate is p/(p+r) = 3.85 % and
// a burst lasts 1/r = 4 packets. Tolerances: the state's lag-one autocorrelation is
// 1-p-r = 0.74, which inflates the variance of the mean loss by (1+0.74)/(1-0.74) ≈ 6.7
// over a Bernoulli's; 4 standard deviations of that over 10^6 packets is 0.002. Mean
// burst length over n ≈ 9,600 bursts of a geometric with variance (1-r)/r² = 12:
// 4·√(12/n) ≈ 0.15.
func TestPathGilbertElliott(t *testing.T) {
	p := NewPath(sim.Stream(3, "ge"))
	p.GilbertElliott = &GilbertElliott{P: 0.01, R: 0.25, BadLoss: 1}
	const n = 1_000_000
	lost, bursts, run := 0, 0, 0
	for i := 0; i < n; i++ {
		if _, l := p.Transit(0, 100); l {
			lost++
			run++
			continue
		}
		if run > 0 {
			bursts++
			run = 0
		}
	}
	if rate := float64(lost) / n; math.Abs(rate-0.01/0.26) > 0.002 {
		t.Errorf("loss rate %.4f, want %.4f ± 0.002", rate, 0.01/0.26)
	}
	if mean := float64(lost) / float64(bursts); math.Abs(mean-4) > 0.15 {
		t.Errorf("mean burst %.2f packets, want 4 ± 0.15", mean)
	}
	// Good-state losses alone: p = 0 keeps the path good, losing GoodLoss of packets.
	q := NewPath(sim.Stream(4, "ge"))
	q.GilbertElliott = &GilbertElliott{R: 1, GoodLoss: 0.02}
	lost = 0
	for i := 0; i < 100_000; i++ {
		if _, l := q.Transit(0, 100); l {
			lost++
		}
	}
	// Bernoulli 2 %: 4σ = 4·√(0.02·0.98/10^5) ≈ 0.0018.
	if rate := float64(lost) / 100_000; math.Abs(rate-0.02) > 0.0018 {
		t.Errorf("good-state loss %.4f, want 0.02 ± 0.0018", rate)
	}
}
