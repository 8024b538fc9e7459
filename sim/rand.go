package sim

import (
	"hash/fnv"
	"math/rand/v2"
)

// Stream returns the random stream of one entity, derived from the scenario seed and
// the entity's stable name. Each entity owning its stream means adding a pod does not
// reshuffle the draws of every other pod.
func Stream(seed int64, entity string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(entity))
	name := h.Sum64()
	return rand.New(rand.NewPCG(splitmix64(uint64(seed)), splitmix64(name^0x9e3779b97f4a7c15)))
}

// splitmix64 spreads nearby seeds (1, 2, 3) into unrelated PCG states.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
