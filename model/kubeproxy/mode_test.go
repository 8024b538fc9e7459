package kubeproxy

import (
	"encoding/json"
	"slices"
	"testing"
)

// Each mode's traits, as its file cites them from kube-proxy's source.
func TestModeTraits(t *testing.T) {
	for _, c := range []struct {
		mode        Mode
		name        string
		noEndpoints Answer
		dials       int
		relays      bool
		inTurn      bool
	}{
		{Iptables, "iptables", Refuse, 0, false, false},
		{Nftables, "nftables", Refuse, 0, false, false},
		{IPVS, "ipvs", Refuse, 0, false, true},
		{Userspace, "userspace", AcceptThenClose, 4, true, true},
		{Mode{}, "", Refuse, 0, false, false},
	} {
		m := c.mode
		if m.String() != c.name || m.NoEndpoints() != c.noEndpoints || len(m.DialTimeouts()) != c.dials ||
			m.Relays() != c.relays || m.InTurn() != c.inTurn {
			t.Errorf("%q: name %q, no endpoints %d, %d dials, relays %v, in turn %v; want %q, %d, %d, %v, %v",
				c.name, m, m.NoEndpoints(), len(m.DialTimeouts()), m.Relays(), m.InTurn(),
				c.name, c.noEndpoints, c.dials, c.relays, c.inTurn)
		}
	}
	if got, want := Names(), []string{"iptables", "nftables", "ipvs", "userspace"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v (the docs' order)", got, want)
	}
}

// What only a proxy process can do goes with relaying: accept a connection it cannot
// serve, and dial another endpoint when one fails. A mode that says otherwise
// contradicts itself.
func TestTraitsAgree(t *testing.T) {
	for _, m := range Modes() {
		if m.Relays() != (m.NoEndpoints() == AcceptThenClose) {
			t.Errorf("%s: relays %v but answers no endpoints with %d", m, m.Relays(), m.NoEndpoints())
		}
		if len(m.DialTimeouts()) > 0 && !m.Relays() {
			t.Errorf("%s: retries dials without a process that holds the client's connection", m)
		}
	}
}

// InTurn says what the balancer does: over rounds of n picks from n endpoints, a mode
// that picks in turn uses every endpoint once per round, and a random one repeats one
// in some round. With n = 4 a random round has no repeat with probability 4!/4^4 ≈ 0.094,
// so 50 such rounds all without one has probability below 1e-51.
func TestInTurnIsWhatTheBalancerDoes(t *testing.T) {
	const n, rounds = 4, 50
	for _, m := range Modes() {
		b, err := New(m, "", newRNG(3))
		if err != nil {
			t.Fatal(err)
		}
		b.SetEndpoints([]Endpoint{0, 1, 2, 3})
		repeated := false
		for range rounds {
			got := picks(b, n)
			slices.Sort(got)
			repeated = repeated || len(slices.Compact(got)) < n
		}
		if repeated == m.InTurn() {
			t.Errorf("%s: in turn %v, but a round of %d picks repeated an endpoint: %v", m, m.InTurn(), n, repeated)
		}
	}
}

func TestParse(t *testing.T) {
	for _, m := range Modes() {
		if got := Parse(m.String()); got != m || !got.Known() {
			t.Errorf("Parse(%q) = %v (known %v), want the mode itself", m, got, got.Known())
		}
	}
	if m := Parse(""); !m.IsZero() || m.Known() {
		t.Errorf(`Parse("") = %q, want the zero Mode`, m)
	}
	// A name this version does not know is kept, without traits: an old Result's mode
	// still prints, and scenario refuses it.
	m := Parse("ebpf")
	if m.String() != "ebpf" || m.IsZero() || m.Known() || m.Relays() || m.InTurn() || m.DialTimeouts() != nil {
		t.Errorf(`Parse("ebpf") = %q, known %v; want the name alone`, m, m.Known())
	}
	if _, err := New(m, "", newRNG(1)); err == nil {
		t.Error("New accepted an unknown mode")
	}
}

// A Mode is written as its name, as the Result's "proxy_mode" always was, and read back.
func TestModeJSON(t *testing.T) {
	type doc struct {
		Mode Mode `json:"proxy_mode"`
	}
	for _, c := range []struct {
		mode Mode
		json string
	}{
		{Iptables, `{"proxy_mode":"iptables"}`},
		{Userspace, `{"proxy_mode":"userspace"}`},
		{Mode{}, `{"proxy_mode":""}`},
		{Parse("ebpf"), `{"proxy_mode":"ebpf"}`},
	} {
		out, err := json.Marshal(doc{c.mode})
		if err != nil || string(out) != c.json {
			t.Errorf("%q: marshalled %s, %v; want %s", c.mode, out, err, c.json)
		}
		var back doc
		if err := json.Unmarshal(out, &back); err != nil || back.Mode.String() != c.mode.String() {
			t.Errorf("%s: read back %q, %v", out, back.Mode, err)
		}
	}
	var back doc
	if err := json.Unmarshal([]byte(`{"proxy_mode":"ipvs"}`), &back); err != nil || back.Mode != IPVS {
		t.Errorf("ipvs read back as %q, %v; want IPVS itself", back.Mode, err)
	}
}
