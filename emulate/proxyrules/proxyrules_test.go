package proxyrules

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"trafficlab/internal/golden"
	"trafficlab/model/kubeproxy"
)

var (
	ip   = netip.MustParseAddr
	ipp  = netip.MustParseAddrPort
	cidr = netip.MustParsePrefix
)

// goldenCases are rule sets whose full output is kept under testdata/ and was checked
// line by line against kube-proxy's syncProxyRules.
var goldenCases = []struct {
	name     string
	rules    Rules
	existing []string // iptables: nat chains; nftables: table chains
	nftFirst bool
}{
	{
		// Three endpoints given out of order and once twice, and a Service without
		// endpoints; a fresh namespace.
		name: "basic",
		rules: Rules{
			Config: Config{Prefix: "tl-golden"},
			Services: []Service{
				{Name: "web", ClusterIP: ip("10.233.255.10"), Port: 80,
					Endpoints: []netip.AddrPort{ipp("10.233.1.3:8080"), ipp("10.233.1.1:8080"), ipp("10.233.1.2:8080"), ipp("10.233.1.1:8080")}},
				{Name: "empty", ClusterIP: ip("10.233.255.11"), Port: 80},
			},
		},
		nftFirst: true,
	},
	{
		// --cluster-cidr, ServiceCIDRs and a node IP; a named port whose endpoints sort
		// as text (10.244.1.10 before 10.244.1.2); a UDP Service in another namespace;
		// a resync over rules that had one more endpoint and a chain that is not
		// kube-proxy's.
		name: "clustercidr-resync",
		rules: Rules{
			Config: Config{
				ClusterCIDR:  cidr("10.244.0.0/16"),
				ServiceCIDRs: []netip.Prefix{cidr("10.96.0.0/16")},
				NodeIP:       ip("192.168.0.10"),
			},
			Services: []Service{
				{Name: "api", PortName: "http", ClusterIP: ip("10.96.0.20"), Port: 80,
					Endpoints: EndpointsAt(8080, ip("10.244.1.2"), ip("10.244.1.10"))},
				{Name: "kube-dns", Namespace: "kube-system", PortName: "dns", Protocol: "UDP", ClusterIP: ip("10.96.0.10"), Port: 53,
					Endpoints: EndpointsAt(53, ip("10.244.2.5"))},
			},
		},
		existing: []string{
			// Chains of the previous sync: api had 10.244.1.7 too.
			"KUBE-SERVICES", "KUBE-NODEPORTS", "KUBE-POSTROUTING", "KUBE-MARK-MASQ", "PREROUTING", "OUTPUT", "POSTROUTING", "INPUT",
			"KUBE-SVC-KKDGWRPDK6Z5NCHS", "KUBE-SEP-KPNBAYNFCKLKKQGX", "KUBE-SEP-G3NEGNSBQXJ6TANI", "KUBE-SEP-YAQTXJ3BOAFZRAYM", "KUBE-SVC-TCOU7JCQXEZGVUNU", "KUBE-SEP-PBFVJUGNX7I4VSY2",
			"SOMEONE-ELSES",
			"services", "service-FKIP43JP-default/api/tcp/http", "endpoint-PJ67FMJM-default/api/tcp/http__10.244.1.7/8080",
			"endpoint-RVWSFFC6-default/api/tcp/http__10.244.1.10/8080", "endpoint-WDYJ2WOH-default/api/tcp/http__10.244.1.2/8080",
		},
	},
	{
		// --masquerade-all.
		name: "masquerade-all",
		rules: Rules{
			Config: Config{MasqueradeAll: true},
			Services: []Service{
				{Name: "web", Namespace: "shop", ClusterIP: ip("10.96.7.7"), Port: 443,
					Endpoints: EndpointsAt(8443, ip("10.244.3.1"), ip("10.244.3.2"))},
			},
		},
		nftFirst: true,
	},
}

func TestGolden(t *testing.T) {
	for _, c := range goldenCases {
		ipt, err := c.rules.IptablesRestore(c.existing)
		if err != nil {
			t.Fatalf("%s: IptablesRestore: %v", c.name, err)
		}
		nft, err := c.rules.NftablesScript(c.existing, c.nftFirst)
		if err != nil {
			t.Fatalf("%s: NftablesScript: %v", c.name, err)
		}
		golden.Check(t, filepath.Join("testdata", c.name+".iptables.golden"), ipt)
		golden.Check(t, filepath.Join("testdata", c.name+".nft.golden"), nft)
	}
}

// The expected names and lines below are copied from kube-proxy's own tests
// (pkg/proxy/iptables/proxier_test.go and pkg/proxy/nftables/proxier_test.go), which
// build ns1/svc1:p80 at 172.30.0.41 with endpoints in 10.180.0.0/16 and
// --cluster-cidr 10.0.0.0/8.
func TestChainNamesMatchKubernetesTests(t *testing.T) {
	svc := func(ns, name string) servicePort {
		sp, err := Service{Namespace: ns, Name: name, PortName: "p80", ClusterIP: ip("172.30.0.41"), Port: 80}.normalize()
		if err != nil {
			t.Fatal(err)
		}
		return sp
	}
	dns, err := Service{Namespace: "kube-system", Name: "kube-dns", PortName: "dns", Protocol: "UDP", ClusterIP: ip("10.96.0.10"), Port: 53}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ got, want string }{
		{iptablesServiceChain(svc("ns1", "svc1")), "KUBE-SVC-XPGD46QRK7WJZT7O"},
		{iptablesServiceChain(svc("ns2", "svc2")), "KUBE-SVC-GNZBNJ2PO5MGZ6GT"},
		// kube-dns as every cluster has it: kube-system/kube-dns:dns over UDP.
		{iptablesServiceChain(dns), "KUBE-SVC-TCOU7JCQXEZGVUNU"},
		{nftablesServiceChain(dns), "service-FY5PMXPG-kube-system/kube-dns/udp/dns"},
		{iptablesEndpointChain(svc("ns1", "svc1"), ipp("10.180.0.1:80")), "KUBE-SEP-SXIVWICOYRO3J4NJ"},
		{iptablesEndpointChain(svc("ns1", "svc1"), ipp("10.180.2.1:80")), "KUBE-SEP-ZX7GRIZKSNUQ3LAJ"},
		{iptablesEndpointChain(svc("ns2", "svc2"), ipp("10.180.0.2:80")), "KUBE-SEP-RS4RBKLTHTF2IUXJ"},
		{nftablesServiceChain(svc("ns1", "svc1")), "service-ULMVA6XW-ns1/svc1/tcp/p80"},
		{nftablesServiceChain(svc("ns2", "svc2")), "service-42NFTM6N-ns2/svc2/tcp/p80"},
		{nftablesEndpointChain(svc("ns1", "svc1"), ipp("10.180.0.1:80")), "endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80"},
		{nftablesEndpointChain(svc("ns4", "svc4"), ipp("10.180.0.4:80")), "endpoint-UNZV3OEC-ns4/svc4/tcp/p80__10.180.0.4/80"},
		{nftablesEndpointChain(svc("ns4", "svc4"), ipp("10.180.0.5:80")), "endpoint-5RFCDDV7-ns4/svc4/tcp/p80__10.180.0.5/80"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
}

func TestRuleLinesMatchKubernetesTests(t *testing.T) {
	base := Config{ClusterCIDR: cidr("10.0.0.0/8")}
	one := Rules{Config: base, Services: []Service{{Namespace: "ns1", Name: "svc1", PortName: "p80", ClusterIP: ip("172.30.0.41"), Port: 80,
		Endpoints: []netip.AddrPort{ipp("10.180.0.1:80")}}}}
	two := Rules{Config: base, Services: []Service{{Namespace: "ns1", Name: "svc1", PortName: "p80", ClusterIP: ip("172.30.0.41"), Port: 80,
		Endpoints: []netip.AddrPort{ipp("10.180.2.1:80"), ipp("10.180.0.1:80")}}}}
	none := Rules{Config: base, Services: []Service{{Namespace: "ns1", Name: "svc1", PortName: "p80", ClusterIP: ip("172.30.0.41"), Port: 80}}}
	for _, c := range []struct {
		name  string
		rules Rules
		mode  Mode
		lines []string
	}{
		{"iptables, one endpoint", one, Iptables, []string{
			`-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O`,
			`-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ`,
			`-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -j KUBE-SEP-SXIVWICOYRO3J4NJ`,
			`-A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -s 10.180.0.1 -j KUBE-MARK-MASQ`,
			`-A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.1:80`,
			`-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS`,
			`-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP`,
			`-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
			`-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully`,
		}},
		{"iptables, two endpoints", two, Iptables, []string{
			`-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-SXIVWICOYRO3J4NJ`,
			`-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.180.2.1:80" -j KUBE-SEP-ZX7GRIZKSNUQ3LAJ`,
		}},
		{"iptables, no endpoints", none, Iptables, []string{
			`-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 has no endpoints" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j REJECT`,
		}},
		{"nftables, one endpoint", one, Nftables, []string{
			`add rule ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80 ip daddr 172.30.0.41 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade`,
			`add rule ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80 numgen random mod 1 vmap { 0 : goto endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80 }`,
			`add chain ip kube-proxy endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80`,
			`add rule ip kube-proxy endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80 ip saddr 10.180.0.1 jump mark-for-masquerade`,
			`add rule ip kube-proxy endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80 meta l4proto tcp dnat to 10.180.0.1:80`,
			`add element ip kube-proxy cluster-ips { 172.30.0.41 }`,
			`add element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 : goto service-ULMVA6XW-ns1/svc1/tcp/p80 }`,
			`add table ip kube-proxy { comment "rules for kube-proxy" ; }`,
			`add chain ip kube-proxy filter-output { type filter hook output priority -110 ; }`,
			`add chain ip kube-proxy nat-output { type nat hook output priority -100 ; }`,
			`add chain ip kube-proxy nat-postrouting { type nat hook postrouting priority 100 ; }`,
			`add chain ip kube-proxy reject-chain { comment "helper for @no-endpoint-services / @no-endpoint-nodeports" ; }`,
			`add rule ip kube-proxy masquerading masquerade fully-random`,
		}},
		{"nftables, no endpoints", none, Nftables, []string{
			`add element ip kube-proxy cluster-ips { 172.30.0.41 }`,
			`add element ip kube-proxy no-endpoint-services { 172.30.0.41 . tcp . 80 comment "ns1/svc1:p80" : goto reject-chain }`,
		}},
	} {
		var out []byte
		var err error
		if c.mode == Iptables {
			out, err = c.rules.IptablesRestore(nil)
		} else {
			out, err = c.rules.NftablesScript(nil, true)
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		lines := strings.Split(string(out), "\n")
		for _, want := range c.lines {
			if !slices.Contains(lines, want) {
				t.Errorf("%s: missing line\n%s\nin\n%s", c.name, want, out)
			}
		}
	}
}

// kube-proxy's probability strings, and that they are the numbers the simulator draws
// with (model/kubeproxy.IptablesProbabilities).
func TestProbabilityMatchesSimulator(t *testing.T) {
	if got := probability(3); got != "0.3333333333" {
		t.Errorf("probability(3) = %s", got)
	}
	if got := probability(2); got != "0.5000000000" {
		t.Errorf("probability(2) = %s", got)
	}
	for _, n := range []int{1, 2, 3, 5, 7, 100} {
		sim := kubeproxy.IptablesProbabilities(n)
		for i := range n - 1 {
			p, err := strconv.ParseFloat(probability(n-i), 64)
			if err != nil || p != sim[i] {
				t.Errorf("n=%d rule %d: writes %s, simulator uses %v", n, i, probability(n-i), sim[i])
			}
		}
	}
}

// A service chain of n endpoints has n rules: statistic matches on all but the last.
func TestIptablesServiceChainShape(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5} {
		var eps []netip.AddrPort
		for i := range n {
			eps = append(eps, netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(i + 1)}), 80))
		}
		r := Rules{Services: []Service{{Name: "s", ClusterIP: ip("10.96.0.1"), Port: 80, Endpoints: eps}}}
		out, err := r.IptablesRestore(nil)
		if err != nil {
			t.Fatal(err)
		}
		sp, _ := r.Services[0].normalize()
		chain := "-A " + iptablesServiceChain(sp) + " "
		var probs []string
		for line := range strings.Lines(string(out)) {
			if strings.HasPrefix(line, chain) {
				_, after, ok := strings.Cut(line, "--probability ")
				if ok {
					probs = append(probs, strings.Fields(after)[0])
				} else {
					probs = append(probs, "always")
				}
			}
		}
		var want []string
		for i := range n - 1 {
			want = append(want, probability(n-i))
		}
		want = append(want, "always")
		if !slices.Equal(probs, want) {
			t.Errorf("n=%d: probabilities %v, want %v", n, probs, want)
		}
	}
}

// Past 1000 endpoints kube-proxy stops commenting the per-endpoint rules.
func TestIptablesLargeClusterDropsComments(t *testing.T) {
	var eps []netip.AddrPort
	for i := range 1001 {
		eps = append(eps, netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i / 250), byte(i%250 + 1)}), 80))
	}
	r := Rules{Services: []Service{{Name: "big", ClusterIP: ip("10.96.0.1"), Port: 80, Endpoints: eps}}}
	out, err := r.IptablesRestore(nil)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(out)) {
		if (strings.HasPrefix(line, "-A KUBE-SEP-") || strings.HasPrefix(line, "-A KUBE-SVC-")) && strings.Contains(line, "--comment") {
			t.Fatalf("comment in large-cluster mode: %s", line)
		}
	}
	r.Services[0].Endpoints = eps[:1000]
	out, _ = r.IptablesRestore(nil)
	if !strings.Contains(string(out), `-m comment --comment "default/big -> 10.1.0.1:80"`) {
		t.Error("1000 endpoints: per-endpoint comments missing")
	}
}

func TestValidation(t *testing.T) {
	good := Service{Name: "web", ClusterIP: ip("10.96.0.1"), Port: 80}
	for _, c := range []struct {
		name  string
		rules Rules
	}{
		{"IPv6 cluster IP", Rules{Services: []Service{{Name: "web", ClusterIP: ip("fd00::1"), Port: 80}}}},
		{"no cluster IP", Rules{Services: []Service{{Name: "web", Port: 80}}}},
		{"port 0", Rules{Services: []Service{{Name: "web", ClusterIP: ip("10.96.0.1")}}}},
		{"no name", Rules{Services: []Service{{ClusterIP: ip("10.96.0.1"), Port: 80}}}},
		{"upper-case name", Rules{Services: []Service{{Name: "Web", ClusterIP: ip("10.96.0.1"), Port: 80}}}},
		{"protocol", Rules{Services: []Service{{Name: "web", Protocol: "tcp", ClusterIP: ip("10.96.0.1"), Port: 80}}}},
		{"endpoint without port", Rules{Services: []Service{{Name: "web", ClusterIP: ip("10.96.0.1"), Port: 80, Endpoints: []netip.AddrPort{ipp("10.0.0.1:0")}}}}},
		{"same service twice", Rules{Services: []Service{good, good}}},
		{"same cluster IP and port", Rules{Services: []Service{good, {Name: "other", ClusterIP: ip("10.96.0.1"), Port: 80}}}},
		{"prefix with a newline", Rules{Config: Config{Prefix: "a\nCOMMIT"}, Services: []Service{good}}},
		{"IPv6 cluster CIDR", Rules{Config: Config{ClusterCIDR: cidr("fd00::/64")}, Services: []Service{good}}},
	} {
		if _, err := c.rules.IptablesRestore(nil); err == nil {
			t.Errorf("%s: IptablesRestore accepted it", c.name)
		}
		if _, err := c.rules.NftablesScript(nil, true); err == nil {
			t.Errorf("%s: NftablesScript accepted it", c.name)
		}
	}
	// The same ClusterIP and port is fine for two protocols (DNS on TCP and UDP).
	udp := Service{Name: "web-udp", Protocol: "UDP", ClusterIP: ip("10.96.0.1"), Port: 80}
	if _, err := (Rules{Services: []Service{good, udp}}).IptablesRestore(nil); err != nil {
		t.Errorf("TCP and UDP on one port: %v", err)
	}
}

func TestUsableEndpoints(t *testing.T) {
	addr := func(ep kubeproxy.Endpoint) netip.AddrPort {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 244, 0, byte(ep)}), 8080)
	}
	ready := func(ep kubeproxy.Endpoint) kubeproxy.EndpointState { return kubeproxy.Conditions(ep, true, false) }
	draining := func(ep kubeproxy.Endpoint) kubeproxy.EndpointState { return kubeproxy.Conditions(ep, true, true) }
	got := UsableEndpoints([]kubeproxy.EndpointState{draining(1), ready(2), ready(3)}, addr)
	if !slices.Equal(got, []netip.AddrPort{ipp("10.244.0.2:8080"), ipp("10.244.0.3:8080")}) {
		t.Errorf("ready ones: %v", got)
	}
	got = UsableEndpoints([]kubeproxy.EndpointState{draining(1), kubeproxy.Conditions(4, false, true)}, addr)
	if !slices.Equal(got, []netip.AddrPort{ipp("10.244.0.1:8080")}) {
		t.Errorf("all terminating: %v", got)
	}
}

func TestIptablesCleanup(t *testing.T) {
	existing := []string{"PREROUTING", "OUTPUT", "KUBE-SERVICES", "KUBE-SEP-AAAA", "KUBE-SVC-BBBB", "KUBE-MARK-MASQ", "KUBE-POSTROUTING", "KUBE-NODEPORTS", "OTHER"}
	want := `*nat
:KUBE-SERVICES - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-SEP-AAAA - [0:0]
:KUBE-SVC-BBBB - [0:0]
-X KUBE-SERVICES
-X KUBE-NODEPORTS
-X KUBE-POSTROUTING
-X KUBE-MARK-MASQ
-X KUBE-SEP-AAAA
-X KUBE-SVC-BBBB
COMMIT
`
	if got := string(iptablesCleanup("nat", existing)); got != want {
		t.Errorf("nat cleanup:\n%s\nwant\n%s", got, want)
	}
	filter := string(iptablesCleanup("filter", []string{"INPUT", "KUBE-FIREWALL", "KUBE-FORWARD", "KUBE-SEP-AAAA"}))
	if filter != "*filter\n:KUBE-FORWARD - [0:0]\n:KUBE-FIREWALL - [0:0]\n-X KUBE-FORWARD\n-X KUBE-FIREWALL\nCOMMIT\n" {
		t.Errorf("filter cleanup:\n%s", filter)
	}
}

func TestIptablesSavedChains(t *testing.T) {
	save := "# Generated by iptables-save v1.8.9\n*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n-A OUTPUT -j KUBE-SERVICES\nCOMMIT\n"
	if got := iptablesSavedChains([]byte(save)); !slices.Equal(got, []string{"PREROUTING", "KUBE-SERVICES"}) {
		t.Errorf("got %v", got)
	}
}

func TestParseNftChains(t *testing.T) {
	out := `{"nftables": [{"metainfo": {"version": "1.0.6"}}, {"table": {"family": "ip", "name": "kube-proxy", "handle": 1}},
{"chain": {"family": "ip", "table": "kube-proxy", "name": "services", "handle": 1}},
{"chain": {"family": "ip", "table": "kube-proxy", "name": "endpoint-X-a/b/tcp/__1.2.3.4/80", "handle": 2}},
{"rule": {"family": "ip", "table": "kube-proxy", "chain": "services", "handle": 3, "expr": []}},
{"map": {"family": "ip", "name": "service-ips", "table": "kube-proxy", "type": ["ipv4_addr"], "handle": 4, "map": "verdict"}}]}`
	got, err := parseNftChains([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["services"] != 1 || got["endpoint-X-a/b/tcp/__1.2.3.4/80"] != 0 {
		t.Errorf("got %v", got)
	}
}

func TestNftablesDeleteStale(t *testing.T) {
	r := goldenCases[1].rules
	counts := map[string]int{
		"services":                              0, // not a per-service chain
		"service-FKIP43JP-default/api/tcp/http": 2,
		"endpoint-PJ67FMJM-default/api/tcp/http__10.244.1.7/8080":     0, // stale and flushed: delete
		"endpoint-AAAAAAAA-default/gone/tcp/__10.244.9.9/80":          2, // stale, not yet flushed: keep
		"endpoint-RVWSFFC6-default/api/tcp/http__10.244.1.10/8080":    0, // hypothetically empty but active: keep
		"endpoint-WDYJ2WOH-default/api/tcp/http__10.244.1.2/8080":     2,
		"service-DDDDDDDD-kube-system/kube-dns/udp/dns":               1,
		"endpoint-EEEEEEEE-kube-system/kube-dns/udp/dns__10.2.5.5/53": 0,
	}
	got, deleted, err := r.nftablesDeleteStale(counts)
	if err != nil {
		t.Fatal(err)
	}
	want := "delete chain ip kube-proxy endpoint-EEEEEEEE-kube-system/kube-dns/udp/dns__10.2.5.5/53\n" +
		"delete chain ip kube-proxy endpoint-PJ67FMJM-default/api/tcp/http__10.244.1.7/8080\n"
	if string(got) != want || len(deleted) != 2 {
		t.Errorf("got\n%s%v\nwant\n%s", got, deleted, want)
	}
	// The active chain names the golden case relies on are the real ones.
	svcs, _ := r.normalize()
	active := nftablesActiveChains(svcs)
	for _, c := range []string{"service-FKIP43JP-default/api/tcp/http", "endpoint-RVWSFFC6-default/api/tcp/http__10.244.1.10/8080", "endpoint-WDYJ2WOH-default/api/tcp/http__10.244.1.2/8080"} {
		if !active[c] {
			t.Errorf("%s is not active; active: %v", c, active)
		}
	}
}

// Apply and Flush refuse to program anything but a named namespace, and say plainly
// that IPVS is not available; no command runs.
func TestApplyRefuses(t *testing.T) {
	ctx := context.Background()
	r := goldenCases[0].rules
	for _, ns := range []string{"", "..", "a/b"} {
		if err := Apply(ctx, ns, Iptables, r); err == nil {
			t.Errorf("Apply in namespace %q was accepted", ns)
		}
		if err := Flush(ctx, ns, Nftables); err == nil {
			t.Errorf("Flush in namespace %q was accepted", ns)
		}
	}
	if err := Apply(ctx, "tltest-none", kubeproxy.IPVS, r); !errors.Is(err, ErrIPVSUnsupported) {
		t.Errorf("ipvs: %v", err)
	}
	if err := Apply(ctx, "tltest-none", kubeproxy.Userspace, r); !errors.Is(err, ErrUserspaceHasNoRules) {
		t.Errorf("userspace: %v", err)
	}
	if err := Flush(ctx, "tltest-none", kubeproxy.Parse("bogus")); err == nil || !strings.Contains(err.Error(), "unknown proxy mode") {
		t.Errorf("bogus mode: %v", err)
	}
}

func ExampleRules_IptablesRestore() {
	r := Rules{Services: []Service{{
		Name: "web", ClusterIP: netip.MustParseAddr("10.96.0.10"), Port: 80,
		Endpoints: EndpointsAt(8080, netip.MustParseAddr("10.244.1.1"), netip.MustParseAddr("10.244.2.1")),
	}}}
	out, _ := r.IptablesRestore(nil)
	for line := range strings.Lines(string(out)) {
		if strings.HasPrefix(line, "-A KUBE-SVC-") {
			fmt.Print(line)
		}
	}
	// Output:
	// -A KUBE-SVC-LOLE4ISW44XBNF3G -m comment --comment "default/web -> 10.244.1.1:8080" -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-6L3SSTGG2VO7SASU
	// -A KUBE-SVC-LOLE4ISW44XBNF3G -m comment --comment "default/web -> 10.244.2.1:8080" -j KUBE-SEP-BECL57DTYVU7WYLC
}
