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
	"strings"
)

// Endpoint identifies a backend pod (the engine's pod index).
type Endpoint = int32

// Balancer is one node's kube-proxy rules for one Service.
type Balancer interface {
	// SetEndpoints replaces the ready endpoint list, in the order kube-proxy writes its rules.
	SetEndpoints(eps []Endpoint)
	// Pick chooses the endpoint of a new connection from source address key src (used by
	// IPVS sh). ok=false: no endpoints; the connection gets the mode's NoEndpoints.
	Pick(src uint64) (ep Endpoint, ok bool)
	// Connected and Disconnected report a connection's life (IPVS lc, sed, nq count active connections).
	Connected(ep Endpoint)
	Disconnected(ep Endpoint)
}

// New returns mode's balancer for one node and one Service with, for IPVS, scheduler
// ("rr", "lc", "sh", "sed", "nq"; "" means rr). Other modes ignore scheduler. rng is
// this node's own random stream.
func New(mode Mode, scheduler string, rng *rand.Rand) (Balancer, error) {
	if rng == nil {
		return nil, errors.New("kubeproxy: nil random stream")
	}
	if !mode.Known() {
		return nil, fmt.Errorf("kubeproxy: unknown proxy mode %q (want %s)", mode, strings.Join(Names(), ", "))
	}
	return mode.d.balancer(scheduler, rng)
}

// noConnCounts is embedded by the modes whose choice ignores connection counts.
type noConnCounts struct{}

func (noConnCounts) Connected(Endpoint)    {}
func (noConnCounts) Disconnected(Endpoint) {}
