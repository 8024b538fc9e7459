package delay

import (
	"math/rand/v2"
	"time"

	"trafficlab/scenario"
)

// draw is one packet's delay as tc netem draws it (tc-netem(8); tabledist in the
// kernel's net/sched/sch_netem.c): latency plus a draw uniform in ±jitter, or, with
// the normal distribution, jitter times a standard normal draw. A sum below zero
// sends the packet at once, as netem's time_to_send in the past does. (netem's normal
// comes from a table cut at about ±4 standard deviations; this one is not cut.)
func draw(rng *rand.Rand, latency, jitter time.Duration, distribution string) time.Duration {
	d := latency
	if jitter > 0 {
		var x float64
		if distribution == scenario.JitterNormal {
			x = rng.NormFloat64()
		} else {
			x = 2*rng.Float64() - 1
		}
		d += time.Duration(x * float64(jitter))
	}
	return max(d, 0)
}
