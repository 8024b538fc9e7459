package scenario

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trafficlab/model/library"
)

// Defaults of fields a scenario may leave out.
const (
	defaultPoolName     = "worker"
	defaultPoolCount    = 3
	defaultTimeout      = 30 * time.Second
	defaultLocalLatency = 20 * time.Microsecond
)

// setDefaults fills the fields the user left out. Fields that only mean something in one
// mode (ipvsScheduler with ipvs, arrival with an open loop) are defaulted only in that
// mode, so validation can still tell that a user set them where they do nothing.
func setDefaults(s *Scenario) {
	c := &s.Spec.Cluster
	if c.ProxyMode == "" {
		c.ProxyMode = ProxyIptables
	}
	if c.ProxyMode == ProxyIPVS && c.IPVSScheduler == "" {
		c.IPVSScheduler = IPVSRoundRobin
	}
	if len(c.Nodes) == 0 {
		c.Nodes = []NodePool{{Name: defaultPoolName, Count: defaultPoolCount}}
	}
	if c.Network.LocalLatency == nil {
		c.Network.LocalLatency = &metav1.Duration{Duration: defaultLocalLatency}
	}
	for i := range s.Spec.Clients {
		defaultClient(&s.Spec.Clients[i])
	}
}

func defaultClient(c *Client) {
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.Rate != nil && c.Arrival == "" {
		c.Arrival = ArrivalConstant
	}
	p, hasProfile := library.Lookup(c.Library)
	if c.Timeout == nil {
		// The library's own timeout when it has one; a run needs some bound otherwise.
		t := defaultTimeout
		if hasProfile && p.Timeout > 0 {
			t = p.Timeout
		}
		c.Timeout = &metav1.Duration{Duration: t}
	}
	// The library's profile first, then the generic defaults for whatever is still unset.
	if hasProfile {
		defaultConnections(&c.Connections, p)
	}
	defaultConnections(&c.Connections, library.Profile{Reuse: ReuseShared, Protocol: ProtocolHTTP1})
}

// defaultConnections fills each unset field of conn from profile p.
func defaultConnections(conn *Connections, p library.Profile) {
	if conn.Reuse == "" {
		conn.Reuse = p.Reuse
	}
	if conn.MaxPerHost == nil {
		conn.MaxPerHost = &p.MaxPerHost
	}
	if conn.MaxIdlePerHost == nil {
		conn.MaxIdlePerHost = &p.MaxIdlePerHost
	}
	if conn.IdleTimeout == nil {
		conn.IdleTimeout = &metav1.Duration{Duration: p.IdleTimeout}
	}
	if conn.MaxLifetime == nil {
		conn.MaxLifetime = &metav1.Duration{Duration: p.MaxLifetime}
	}
	if conn.Protocol == "" {
		conn.Protocol = p.Protocol
	}
}
