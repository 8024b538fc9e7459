package kubeproxy

import (
	"math/rand/v2"
	"time"
)

// Mode is kube-proxy's --proxy-mode with what it does that a client can tell apart:
// the engines and reports ask these traits and never compare names. Parse one from
// its name; the zero Mode is no mode, as in a run that saw no cluster (load, vegeta).
type Mode struct{ d *definition }

// definition is one mode: each mode's file declares its own, and modes lists them.
type definition struct {
	name string
	// noEndpoints is what a connection to a Service with no endpoints gets.
	noEndpoints Answer
	// dialTimeouts are a relaying proxy's dial attempts, one endpoint each; nil for
	// the modes that pick once and leave the connection to the kernel.
	dialTimeouts []time.Duration
	// relays: a proxy process accepts the client's connection and copies its bytes
	// to a connection of its own to the pod, rather than the kernel rewriting packets.
	relays bool
	// relayCPU is that process's CPU per relayed connection, per relayed request
	// and per KiB copied.
	relayCPU [3]time.Duration
	// inTurn: new connections go to the endpoints in turn (or to the least busy),
	// not each to one drawn at random.
	inTurn bool
	// balancer returns one node's rules for one Service, from its own random stream.
	balancer func(scheduler string, rng *rand.Rand) (Balancer, error)
}

// Answer is what a client's connection gets when kube-proxy has no endpoint for it.
type Answer uint8

const (
	// Refuse: a REJECT rule, or IPVS's ICMP port unreachable, on the client's own node;
	// connect(2) fails with ECONNREFUSED.
	Refuse Answer = iota
	// AcceptThenClose: the proxy process has accepted the connection, finds no endpoint
	// and closes it; the client sees its connection reset.
	AcceptThenClose
)

// The modes trafficlab models.
var (
	Iptables  = Mode{&iptablesMode}
	Nftables  = Mode{&nftablesMode}
	IPVS      = Mode{&ipvsMode}
	Userspace = Mode{&userspaceMode}
)

// modes are the modes trafficlab models, in the order the docs list them.
var modes = []Mode{Iptables, Nftables, IPVS, Userspace}

// Modes returns the modes trafficlab models, in the order the docs list them.
func Modes() []Mode { return append([]Mode(nil), modes...) }

// Names returns the names of Modes, in the same order.
func Names() []string {
	names := make([]string, len(modes))
	for i, m := range modes {
		names[i] = m.d.name
	}
	return names
}

// Parse returns the mode called name: one of Names, or "" for the zero Mode. Any other
// name gives a Mode that has only that name and no traits, so that a Result written
// with a mode this version does not know still reads and prints; scenario refuses it
// (Known).
func Parse(name string) Mode {
	if name == "" {
		return Mode{}
	}
	for _, m := range modes {
		if m.d.name == name {
			return m
		}
	}
	return Mode{&definition{name: name}}
}

// Known reports whether trafficlab models m.
func (m Mode) Known() bool { return m.d != nil && m.d.balancer != nil }

// IsZero reports whether m is no mode at all.
func (m Mode) IsZero() bool { return m.d == nil }

// String is the mode's name, as --proxy-mode spells it; "" for the zero Mode.
func (m Mode) String() string {
	if m.d == nil {
		return ""
	}
	return m.d.name
}

// NoEndpoints is what a connection to a Service with no endpoints gets.
func (m Mode) NoEndpoints() Answer {
	if m.d == nil {
		return Refuse
	}
	return m.d.noEndpoints
}

// DialTimeouts are the proxy's dial attempts, each to the next endpoint it picks: a
// failed dial is retried until they are spent. Empty when the mode picks once and the
// client sees the pod's own answer.
func (m Mode) DialTimeouts() []time.Duration {
	if m.d == nil {
		return nil
	}
	return m.d.dialTimeouts
}

// Relays reports whether a proxy process holds the client's connection and relays its
// bytes over a connection of its own to the pod: one more local hop each way, and what
// the pod does to that connection reaches the client as the proxy closing its own.
func (m Mode) Relays() bool { return m.d != nil && m.d.relays }

// RelayCPU is the CPU a relaying mode's proxy process spends per connection it
// relays, per request and answer it relays and per KiB it copies; zero for the
// modes that do not relay.
func (m Mode) RelayCPU() (perConnection, perRequest, perKiB time.Duration) {
	if m.d == nil {
		return 0, 0, 0
	}
	return m.d.relayCPU[0], m.d.relayCPU[1], m.d.relayCPU[2]
}

// InTurn reports whether new connections go to the endpoints in turn (or to the least
// busy), so that k long-lived connections on a node reach at most k pods; otherwise
// each picks one at random.
func (m Mode) InTurn() bool { return m.d != nil && m.d.inTurn }

// MarshalText writes the mode's name: the Result's "proxy_mode".
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads a name as Parse does.
func (m *Mode) UnmarshalText(text []byte) error {
	*m = Parse(string(text))
	return nil
}
