// Package kubeproxy models one node's kube-proxy programming for one Service: which
// backend the rules send each NEW connection to. Conntrack (or the IPVS connection table)
// pins the rest of a connection to that backend; the caller models that. Every node
// decides on its own, from its own random stream and its own counters.
//
// The selection logic mirrors kubernetes/kubernetes pkg/proxy and the Linux netfilter and
// IPVS code that executes the rules; each function cites the source it mirrors.
package kubeproxy

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Endpoint identifies a backend pod (the engine's pod index).
type Endpoint = int32

// Balancer is one node's kube-proxy rules for one Service.
type Balancer interface {
	// SetEndpoints replaces the ready endpoint list, in the order kube-proxy writes its rules.
	SetEndpoints(eps []Endpoint)
	// Pick chooses the endpoint of a new connection from source address key src (used by
	// IPVS sh). ok=false: no endpoints; kube-proxy's REJECT rule refuses the connection
	// (IPVS answers ICMP port unreachable, also a refusal; userspace accepts, then closes).
	Pick(src uint64) (ep Endpoint, ok bool)
	// Connected and Disconnected report a connection's life (IPVS lc, sed, nq count active connections).
	Connected(ep Endpoint)
	Disconnected(ep Endpoint)
}

// UserspaceDialTimeouts are the userspace proxier's per-attempt dial timeouts; a failed dial
// tries the next endpoint (call Pick again) with the next timeout, and after the last one the
// proxy closes the client's connection. kubernetes/kubernetes pkg/proxy/userspace/proxysocket.go,
// EndpointDialTimeouts and TryConnectEndpoints (until 1.25; the mode was removed in 1.26).
var UserspaceDialTimeouts = []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, 1 * time.Second, 2 * time.Second}

// New returns the balancer for proxy mode ("iptables", "nftables", "ipvs", "userspace") and,
// for ipvs, scheduler ("rr", "lc", "sh", "sed", "nq"; "" means rr). Other modes ignore
// scheduler. rng is this node's own random stream.
func New(mode, scheduler string, rng *rand.Rand) (Balancer, error) {
	if rng == nil {
		return nil, errors.New("kubeproxy: nil random stream")
	}
	switch mode {
	case "iptables":
		return &iptablesBalancer{draw: rng.Uint32}, nil
	case "nftables":
		return &nftablesBalancer{rng: rng}, nil
	case "ipvs":
		return newIPVS(scheduler, rng)
	case "userspace":
		return &userspaceBalancer{rng: rng}, nil
	}
	return nil, fmt.Errorf("kubeproxy: unknown proxy mode %q (want iptables, nftables, ipvs or userspace)", mode)
}

// noConnCounts is embedded by the modes whose choice ignores connection counts.
type noConnCounts struct{}

func (noConnCounts) Connected(Endpoint)    {}
func (noConnCounts) Disconnected(Endpoint) {}
