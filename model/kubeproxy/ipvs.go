package kubeproxy

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// ipvsMode: a virtual server with no real server answers a new connection with ICMP
// port unreachable (linux net/netfilter/ipvs/ip_vs_core.c, ip_vs_leave), a refusal.
// Its default scheduler, rr, hands connections out in turn; lc, sed and nq to the
// least busy, which spreads long-lived connections alike; sh by source (the Result's
// IPVS scheduler tells it apart). The kernel forwards the packets.
var ipvsMode = definition{
	name:        "ipvs",
	noEndpoints: Refuse,
	inTurn:      true,
	balancer: func(scheduler string, rng *rand.Rand) (Balancer, error) {
		return newIPVS(scheduler, rng)
	},
}

// ipvsDest is one real server of the IPVS virtual service.
type ipvsDest struct {
	ep     Endpoint
	active int32 // activeconns
	// quiesced: kube-proxy removed the endpoint but the real server still has connections,
	// so it stays in the list with weight 0 (pkg/proxy/ipvs/graceful_termination.go,
	// GracefulDeleteRS). Every scheduler skips weight 0, but it keeps its place in the list
	// and in the sh table.
	quiesced bool
}

type ipvsScheduler int

const (
	schedRR ipvsScheduler = iota
	schedLeastConn
	schedSH
)

// ipvsBalancer is one node's IPVS virtual server for one service.
type ipvsBalancer struct {
	sched ipvsScheduler
	// dests is svc->destinations in kernel order: a new real server is linked at the head
	// (linux net/netfilter/ipvs/ip_vs_ctl.c, __ip_vs_update_dest: list_add_rcu).
	dests []ipvsDest
	// last is the rr cursor, svc->sched_data: the dest chosen last, or -1 for the list head.
	last int
	rng  *rand.Rand
}

func newIPVS(scheduler string, rng *rand.Rand) (*ipvsBalancer, error) {
	b := &ipvsBalancer{last: -1, rng: rng}
	switch scheduler {
	case "", "rr": // kube-proxy's default (pkg/proxy/ipvs/proxier.go, DefaultScheduler)
		b.sched = schedRR
	case "lc", "sed", "nq":
		b.sched = schedLeastConn
	case "sh":
		b.sched = schedSH
	default:
		return nil, fmt.Errorf("kubeproxy: unsupported IPVS scheduler %q (want rr, lc, sh, sed or nq)", scheduler)
	}
	return b, nil
}

// SetEndpoints mirrors kube-proxy's syncEndpoint (pkg/proxy/ipvs/proxier.go). It adds the
// new endpoints one by one in Go map order (it ranges over a set's UnsortedList; modelled as
// a uniform shuffle), each landing at the head of the kernel list. An endpoint that comes back
// while quiesced is deleted and added again (MoveRSOutofGracefulDeleteList), so it too moves
// to the head; the kernel finds the same dest in its trash, counters included
// (ip_vs_ctl.c, ip_vs_trash_get_dest). Removed endpoints are deleted at once if they have no
// connection, else quiesced (graceful_termination.go, GracefulDeleteRS and deleteRsFunc).
func (b *ipvsBalancer) SetEndpoints(eps []Endpoint) {
	for _, k := range b.rng.Perm(len(eps)) {
		d := ipvsDest{ep: eps[k]}
		if i := b.find(d.ep); i >= 0 {
			if !b.dests[i].quiesced {
				continue
			}
			d.active = b.dests[i].active
			b.remove(i)
		}
		b.dests = slices.Insert(b.dests, 0, d)
		if b.last >= 0 {
			b.last++
		}
	}
	for i := len(b.dests) - 1; i >= 0; i-- {
		d := &b.dests[i]
		if d.quiesced || slices.Contains(eps, d.ep) {
			continue
		}
		if d.active == 0 {
			b.remove(i)
		} else {
			d.quiesced = true
		}
	}
}

// remove unlinks dests[i]. If the rr cursor was on it, the cursor moves to the previous
// entry (or the head), so the next scan resumes at the entry that followed it
// (ip_vs_rr.c, ip_vs_rr_del_dest).
func (b *ipvsBalancer) remove(i int) {
	b.dests = slices.Delete(b.dests, i, i+1)
	if i <= b.last {
		b.last--
	}
}

func (b *ipvsBalancer) find(ep Endpoint) int {
	for i := range b.dests {
		if b.dests[i].ep == ep {
			return i
		}
	}
	return -1
}

func (b *ipvsBalancer) Pick(src uint64) (Endpoint, bool) {
	var i int
	switch b.sched {
	case schedRR:
		i = b.roundRobin()
	case schedLeastConn:
		i = b.leastConnected()
	default:
		i = b.sourceHash(src)
	}
	if i < 0 {
		return 0, false // ip_vs_core.c, ip_vs_leave: ICMP port unreachable, a refusal
	}
	return b.dests[i].ep, true
}

// roundRobin mirrors ip_vs_rr.c, ip_vs_rr_schedule: scan from the entry after the one chosen
// last, wrap past the list head, and stop after the last-chosen entry itself; the first dest
// with weight > 0 wins and becomes the cursor.
func (b *ipvsBalancer) roundRobin() int {
	n := len(b.dests)
	for k := 1; k <= n; k++ {
		i := (b.last + k) % n
		if !b.dests[i].quiesced {
			b.last = i
			return i
		}
	}
	return -1
}

// leastConnected serves lc, sed and nq. With every weight 1 (kube-proxy's only weight,
// syncEndpoint) and inactive connections not modelled they choose alike: the first dest in
// list order with the fewest active connections.
//   - lc (ip_vs_lc.c, ip_vs_lc_schedule): least ip_vs_dest_conn_overhead =
//     activeconns<<8 + inactconns, replaced only when strictly lower.
//   - sed (ip_vs_sed.c, ip_vs_sed_schedule): least (activeconns+1)/weight, strictly lower.
//   - nq (ip_vs_nq.c, ip_vs_nq_schedule): the first idle dest at once, else as sed.
func (b *ipvsBalancer) leastConnected() int {
	best := -1
	for i := range b.dests {
		d := &b.dests[i]
		if !d.quiesced && (best < 0 || d.active < b.dests[best].active) {
			best = i
		}
	}
	return best
}

// sourceHash mirrors ip_vs_sh.c. ip_vs_sh_reassign deals the 256 buckets round robin over the
// list, one per dest of weight ≤ 1 (quiesced ones included), so bucket b holds
// dests[b % len]. ip_vs_sh_get hashes the source address with hash_32(addr, 8) (the port is
// used only with the sh-port flag, which kube-proxy does not set) and refuses when the bucket's
// dest has weight 0 (no sh-fallback flag either).
func (b *ipvsBalancer) sourceHash(src uint64) int {
	if len(b.dests) == 0 {
		return -1
	}
	i := int(shBucket(src)) % len(b.dests)
	if b.dests[i].quiesced {
		return -1
	}
	return i
}

// shBucket is ip_vs_sh_hashkey for source key src: a 64-bit key is folded to 32 bits by
// XOR, as the kernel folds an IPv6 address (so an IPv4 address, below 2^32, hashes as
// itself), then hash_32(val, 8) = (val * GOLDEN_RATIO_32) >> 24 (include/linux/hash.h,
// since 4.7).
func shBucket(src uint64) uint32 {
	const goldenRatio32 = 0x61C88647
	return (uint32(src) ^ uint32(src>>32)) * goldenRatio32 >> (32 - 8)
}

// Connected counts an ESTABLISHED connection (activeconns).
func (b *ipvsBalancer) Connected(ep Endpoint) {
	if i := b.find(ep); i >= 0 {
		b.dests[i].active++
	}
}

// Disconnected uncounts it; a quiesced dest whose last connection closed is deleted, as
// kube-proxy's graceful termination manager deletes it once it has no connection.
func (b *ipvsBalancer) Disconnected(ep Endpoint) {
	i := b.find(ep)
	if i < 0 || b.dests[i].active == 0 {
		return
	}
	b.dests[i].active--
	if b.dests[i].quiesced && b.dests[i].active == 0 {
		b.remove(i)
	}
}
