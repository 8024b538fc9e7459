package scenario

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trafficlab/model/library"
)

// base is a small valid scenario; the bad cases below each break one line of it, so the
// expected line and column can be read off this listing.
const base = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: t}
spec:
  duration: 10s
  services:
  - name: web
    replicas: 2
    pod:
      serviceTime: {distribution: exponential, mean: 1ms}
  clients:
  - name: caller
    target: web
    threads: 2
`

// edit returns base with the first occurrence of old replaced by new.
func edit(t *testing.T, old, new string) string {
	t.Helper()
	if !strings.Contains(base, old) {
		t.Fatalf("base has no %q", old)
	}
	return strings.Replace(base, old, new, 1)
}

func TestLoadBase(t *testing.T) {
	for _, in := range []string{base, "---\n" + base + "---\n", base + "...\n"} {
		sc, _, diags := Load("f.yaml", []byte(in), nil)
		if len(diags) > 0 || sc == nil {
			t.Fatalf("Load(%q): %v", in, diags)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	const clientFields = "name, target, replicas, threads, rate, arrival, maxInFlight, thinkTime, overhead, timeout, library, connections"
	cases := []struct {
		name, old, new string
		want           string
	}{
		{"unknown key", "    threads: 2", "    thread: 2",
			`14:5: unknown field "thread" in spec.clients[0]; known fields: ` + clientFields},
		{"unknown top-level key", "kind: Scenario", "kind: Scenario\nstatus: {}",
			`3:1: unknown field "status" at the top level; known fields: apiVersion, kind, metadata, spec`},
		{"string for int", "    threads: 2", "    threads: five",
			`14:14: spec.clients[0].threads: expected an integer, got "five"`},
		{"quoted int", "    threads: 2", `    threads: "2"`,
			`14:14: spec.clients[0].threads: expected an integer, got the quoted string "2"`},
		{"mapping for int", "    replicas: 2", "    replicas: {n: 2}",
			`8:15: spec.services[0].replicas: expected an integer, got a mapping`},
		{"scalar for list", "  services:\n  - name: web", "  services: web\n  oops:\n  - name: web",
			`6:13: spec.services: expected a list, got "web"`},
		{"negative duration", "duration: 10s", "duration: -5s",
			`5:13: spec.duration: negative duration -5s`},
		{"duration without unit", "duration: 10s", "duration: 10",
			`5:13: spec.duration: invalid duration "10": durations need a unit, e.g. 10ms`},
		{"garbage duration", "mean: 1ms", "mean: soon",
			`10:54: spec.services[0].pod.serviceTime.mean: invalid duration "soon": want a number and a unit`},
		{"duplicate key", "    replicas: 2", "    replicas: 2\n    replicas: 3",
			`9:5: duplicate field "replicas" in spec.services[0] (first at line 8)`},
		{"bad quantity", "    pod:", "    pod:\n      cpu: lots",
			`10:12: spec.services[0].pod.cpu: invalid quantity "lots": want a Kubernetes quantity such as 500m, 2 or 20Mi`},
		{"negative quantity", "    pod:", "    pod:\n      cpu: -1",
			`10:12: spec.services[0].pod.cpu: negative quantity -1`},
		{"zero quantity", "    pod:", "    pod:\n      cpu: 0m",
			`10:12: spec.services[0].pod.cpu: must be greater than 0; leave it out for no limit`},
		{"bad rate", "    threads: 2", "    rate: 100",
			`14:11: spec.clients[0].rate: invalid rate "100": rates need a unit, e.g. 100/s`},
		{"zero rate", "    threads: 2", "    rate: 0/s",
			`14:11: spec.clients[0].rate: invalid rate "0/s": must be greater than 0`},
		{"yaml syntax", "    replicas: 2", "    replicas: 2: 3",
			`8:1: invalid YAML: mapping values are not allowed in this context`},
		{"tab indentation", "  duration: 10s", "\tduration: 10s",
			`invalid YAML: found character that cannot start any token (YAML does not allow tabs for indentation)`},
		{"trailing empty document is fine, a second one is not", "    threads: 2\n", "    threads: 2\n---\n---\nkind: Scenario\n",
			`16:1: a second YAML document: a scenario file holds one document`},
		{"second document", "    threads: 2\n", "    threads: 2\n---\nkind: Scenario\n",
			`15:1: a second YAML document: a scenario file holds one document`},
		{"bad apiVersion", "apiVersion: trafficlab/v1alpha1", "apiVersion: v1",
			`1:13: apiVersion: must be trafficlab/v1alpha1, got "v1"`},
		{"missing apiVersion", "apiVersion: trafficlab/v1alpha1\n", "",
			`1:1: apiVersion: is required; use trafficlab/v1alpha1`},
		{"bad kind", "kind: Scenario", "kind: Pod",
			`2:7: kind: must be Scenario, got "Pod"`},
		{"missing name", "metadata: {name: t}", "metadata: {description: x}",
			`3:11: metadata.name: is required`},
		{"missing duration", "  duration: 10s\n", "",
			`5:3: spec.duration: is required, e.g. 60s`},
		{"zero duration", "duration: 10s", "duration: 0s",
			`5:13: spec.duration: must be greater than 0`},
		{"unknown proxy mode", "  services:", "  cluster: {proxyMode: ebpf}\n  services:",
			`6:24: spec.cluster.proxyMode: unknown proxy mode "ebpf"; valid: iptables, nftables, ipvs, userspace`},
		{"unknown ipvs scheduler", "  services:", "  cluster: {proxyMode: ipvs, ipvsScheduler: wrr}\n  services:",
			`6:45: spec.cluster.ipvsScheduler: unknown IPVS scheduler "wrr"; valid: rr, lc, sh, sed, nq`},
		{"node pool count", "  services:", "  cluster:\n    nodes: [{name: big, count: 0}]\n  services:",
			`7:32: spec.cluster.nodes[0].count: must be at least 1`},
		{"node pool name", "  services:", "  cluster:\n    nodes: [{name: Big_Pool, count: 1}]\n  services:",
			`7:20: spec.cluster.nodes[0].name: node pool name "Big_Pool" must be a DNS label`},
		{"duplicate node pool", "  services:", "  cluster:\n    nodes: [{name: a, count: 1}, {name: a, count: 2}]\n  services:",
			`7:41: spec.cluster.nodes[1].name: duplicate node pool name "a" (also spec.cluster.nodes[0])`},
		{"negative replicas", "    replicas: 2", "    replicas: -1",
			`8:15: spec.services[0].replicas: must not be negative`},
		{"negative concurrency", "    pod:", "    pod:\n      concurrency: -2",
			`10:20: spec.services[0].pod.concurrency: must not be negative; 0 is unbounded`},
		{"missing service time", "      serviceTime: {distribution: exponential, mean: 1ms}", "      concurrency: 4",
			`10:7: spec.services[0].pod.serviceTime: is required, e.g. {distribution: exponential, mean: 1ms}`},
		{"unknown distribution", "distribution: exponential", "distribution: gauss",
			`10:35: spec.services[0].pod.serviceTime.distribution: unknown distribution "gauss"; valid: constant, exponential, lognormal, uniform, empirical`},
		{"exponential without mean", "{distribution: exponential, mean: 1ms}", "{distribution: exponential}",
			`10:20: spec.services[0].pod.serviceTime.mean: is required by distribution exponential`},
		{"constant without value", "{distribution: exponential, mean: 1ms}", "{distribution: constant}",
			`10:20: spec.services[0].pod.serviceTime.value: is required by distribution constant`},
		{"lognormal p99 and sigma", "{distribution: exponential, mean: 1ms}", "{distribution: lognormal, mean: 1ms, p99: 9ms, sigma: 1}",
			`10:74: spec.services[0].pod.serviceTime.sigma: lognormal takes p99 or sigma, not both`},
		{"lognormal neither", "{distribution: exponential, mean: 1ms}", "{distribution: lognormal, mean: 1ms}",
			`10:20: spec.services[0].pod.serviceTime: lognormal needs p99 or sigma besides mean`},
		{"lognormal p99 below mean", "{distribution: exponential, mean: 1ms}", "{distribution: lognormal, mean: 5ms, p99: 2ms}",
			`10:62: spec.services[0].pod.serviceTime.p99: must be greater than mean (5ms)`},
		{"uniform min above max", "{distribution: exponential, mean: 1ms}", "{distribution: uniform, min: 5ms, max: 2ms}",
			`10:49: spec.services[0].pod.serviceTime.min: must not exceed max (2ms)`},
		{"empirical without samples", "{distribution: exponential, mean: 1ms}", "{distribution: empirical, samples: []}",
			`10:55: spec.services[0].pod.serviceTime.samples: is required by distribution empirical: at least one sample`},
		{"bad wait time", "    pod:", "    pod:\n      waitTime: {distribution: uniform}",
			`10:17: spec.services[0].pod.waitTime.max: is required by distribution uniform`},
		{"exponential with zero mean", "mean: 1ms", "mean: 0s",
			`10:54: spec.services[0].pod.serviceTime.mean: must be greater than 0`},
		{"lognormal with zero sigma", "{distribution: exponential, mean: 1ms}", "{distribution: lognormal, mean: 1ms, sigma: 0}",
			`10:64: spec.services[0].pod.serviceTime.sigma: must be greater than 0`},
		{"service without name", "  - name: web\n    replicas", "  - replicas",
			`7:5: spec.services[0].name: is required`},
		{"no services", "  services:\n  - name: web\n    replicas: 2\n    pod:\n      serviceTime: {distribution: exponential, mean: 1ms}\n", "",
			`8:13: spec.clients[0].target: no service named "web"; the scenario has no services`},
		{"negative client replicas", "    threads: 2", "    threads: 2\n    replicas: -1",
			`15:15: spec.clients[0].replicas: must be at least 1`},
		{"negative threads", "    threads: 2", "    threads: -2",
			`14:14: spec.clients[0].threads: must be greater than 0`},
		{"negative maxIdlePerHost", "    threads: 2", "    threads: 2\n    connections: {maxIdlePerHost: -1}",
			`15:35: spec.clients[0].connections.maxIdlePerHost: must not be negative; 0 is unlimited`},
		{"missing target service", "    target: web", "    target: api",
			`13:13: spec.clients[0].target: no service named "api"; services: web`},
		{"missing target", "    target: web\n", "",
			`12:5: spec.clients[0].target: is required; services: web`},
		{"threads and rate", "    threads: 2", "    threads: 2\n    rate: 100/s",
			`15:11: spec.clients[0].rate: cannot be set with threads: threads run a closed loop, rate an open loop; set one`},
		{"neither threads nor rate", "    threads: 2\n", "",
			`12:5: spec.clients[0]: needs threads (a closed loop) or rate (an open loop)`},
		{"arrival with threads", "    threads: 2", "    threads: 2\n    arrival: poisson",
			`15:14: spec.clients[0].arrival: applies only to an open loop (rate)`},
		{"unknown arrival", "    threads: 2", "    rate: 10/s\n    arrival: bursty",
			`15:14: spec.clients[0].arrival: unknown arrival "bursty"; valid: constant, poisson`},
		{"negative maxInFlight", "    threads: 2", "    rate: 10/s\n    maxInFlight: -1",
			`15:18: spec.clients[0].maxInFlight: must not be negative; 0 is unbounded`},
		{"zero timeout", "    threads: 2", "    threads: 2\n    timeout: 0s",
			`15:14: spec.clients[0].timeout: must be greater than 0`},
		{"duplicate client", "    threads: 2\n", "    threads: 2\n  - {name: caller, target: web, threads: 1}\n",
			`15:12: spec.clients[1].name: duplicate client name "caller" (also spec.clients[0])`},
		{"unknown library", "    threads: 2", "    threads: 2\n    library: netscape",
			`15:14: spec.clients[0].library: unknown library "netscape"; known: ` + strings.Join(library.Names(), ", ")},
		{"unknown reuse", "    threads: 2", "    threads: 2\n    connections: {reuse: sometimes}",
			`15:26: spec.clients[0].connections.reuse: unknown reuse "sometimes"; valid: none, per-thread, shared`},
		{"negative maxPerHost", "    threads: 2", "    threads: 2\n    connections: {maxPerHost: -1}",
			`15:31: spec.clients[0].connections.maxPerHost: must not be negative; 0 is unlimited`},
		{"http2", "    threads: 2", "    threads: 2\n    connections: {protocol: http2}",
			`15:29: spec.clients[0].connections.protocol: protocol http2 is not modelled yet (it arrives with the TCP/HTTP2 model); use http1`},
		{"unknown protocol", "    threads: 2", "    threads: 2\n    connections: {protocol: spdy}",
			`15:29: spec.clients[0].connections.protocol: unknown protocol "spdy"; valid: http1, http2`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc, _, diags := Load("f.yaml", []byte(edit(t, tc.old, tc.new)), nil)
			if sc != nil || !diags.HasErrors() {
				t.Fatalf("loaded without errors; diagnostics: %v", diags)
			}
			if got := diags.Error(); !strings.Contains(got, tc.want) {
				t.Errorf("diagnostics:\n%s\nwant one containing:\n%s", got, tc.want)
			}
		})
	}
}

func TestLoadWarnings(t *testing.T) {
	cases := []struct {
		name, old, new string
		want           string
	}{
		{"service with no replicas", "    replicas: 2", "    replicas: 0",
			`f.yaml:13:13: warning: spec.clients[0].target: service web has 0 replicas: kube-proxy REJECTs its ClusterIP and every connection is refused`},
		{"ipvs scheduler without ipvs", "  services:", "  cluster: {ipvsScheduler: lc}\n  services:",
			`f.yaml:6:28: warning: spec.cluster.ipvsScheduler: applies only with proxyMode ipvs; ignored with iptables`},
		{"unused distribution field", "mean: 1ms}", "mean: 1ms, value: 2ms}",
			`f.yaml:10:66: warning: spec.services[0].pod.serviceTime.value: not used by distribution exponential; ignored`},
		{"think time with rate", "    threads: 2", "    rate: 5/s\n    thinkTime: {distribution: constant, value: 1s}",
			`f.yaml:15:16: warning: spec.clients[0].thinkTime: applies only to a closed loop (threads); ignored`},
		{"maxInFlight with threads", "    threads: 2", "    threads: 2\n    maxInFlight: 3",
			`f.yaml:15:18: warning: spec.clients[0].maxInFlight: applies only to an open loop (rate); ignored`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc, _, diags := Load("f.yaml", []byte(edit(t, tc.old, tc.new)), nil)
			if sc == nil || diags.HasErrors() {
				t.Fatalf("want a scenario and only warnings, got %v", diags)
			}
			if len(diags) != 1 || diags[0].Error() != tc.want {
				t.Errorf("diagnostics:\n%v\nwant exactly:\n%s", diags, tc.want)
			}
		})
	}
}

// TestLoadCollectsAll checks that every error is reported, in file order, whatever
// order the checks run in.
func TestLoadCollectsAll(t *testing.T) {
	t.Run("decoding", func(t *testing.T) {
		in := edit(t, "    threads: 2", "    threads: two\n    thread: 2")
		in = strings.Replace(in, "duration: 10s", "duration: 10", 1)
		_, _, diags := Load("f.yaml", []byte(in), nil)
		want := []string{
			`f.yaml:5:13: spec.duration: invalid duration "10": durations need a unit, e.g. 10ms`,
			`f.yaml:14:14: spec.clients[0].threads: expected an integer, got "two"`,
			`f.yaml:15:5: unknown field "thread" in spec.clients[0]`,
		}
		checkLines(t, diags, want)
	})
	t.Run("validation", func(t *testing.T) {
		// The cluster comes last in the file but is checked before services and clients.
		in := edit(t, "    replicas: 2", "    replicas: -2")
		in = strings.Replace(in, "    target: web", "    target: api", 1)
		in += "  cluster: {proxyMode: ebpf}\n"
		_, _, diags := Load("f.yaml", []byte(in), nil)
		want := []string{
			`f.yaml:8:15: spec.services[0].replicas: must not be negative`,
			`f.yaml:13:13: spec.clients[0].target: no service named "api"`,
			`f.yaml:15:24: spec.cluster.proxyMode: unknown proxy mode "ebpf"`,
		}
		checkLines(t, diags, want)
	})
}

// checkLines checks that diags has one line per want, each starting with it.
func checkLines(t *testing.T, diags Diagnostics, want []string) {
	t.Helper()
	got := strings.Split(diags.Error(), "\n")
	if len(got) != len(want) {
		t.Fatalf("got %d diagnostics, want %d:\n%v", len(got), len(want), diags)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("diagnostic %d:\n%s\nwant prefix:\n%s", i, got[i], want[i])
		}
	}
}

func TestLoadEmpty(t *testing.T) {
	for _, in := range []string{"", "# nothing\n", "---\n"} {
		_, _, diags := Load("f.yaml", []byte(in), nil)
		want := "f.yaml:1:1: empty file: want a Scenario document (apiVersion: trafficlab/v1alpha1, kind: Scenario)"
		if diags.Error() != want {
			t.Errorf("Load(%q) = %v, want %s", in, diags, want)
		}
	}
}

func TestLoadFile(t *testing.T) {
	_, _, diags := LoadFile("testdata/none.yaml", nil)
	if want := "testdata/none.yaml: no such file or directory"; diags.Error() != want {
		t.Errorf("LoadFile of a missing file: %v, want %s", diags, want)
	}
}

func TestDefaults(t *testing.T) {
	sc, _, diags := Load("f.yaml", []byte(base+"  - {name: open, target: web, rate: 50/s}\n"), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	c := sc.Spec.Cluster
	if c.ProxyMode != ProxyIptables || c.IPVSScheduler != "" {
		t.Errorf("proxyMode %q, ipvsScheduler %q; want iptables and none", c.ProxyMode, c.IPVSScheduler)
	}
	if want := []NodePool{{Name: "worker", Count: 3}}; !reflect.DeepEqual(c.Nodes, want) {
		t.Errorf("nodes %+v, want %+v", c.Nodes, want)
	}
	if c.Network.LocalLatency.Duration != 20*time.Microsecond {
		t.Errorf("localLatency %v, want 20us", c.Network.LocalLatency)
	}
	closed, open := sc.Spec.Clients[0], sc.Spec.Clients[1]
	if closed.Replicas != 1 || closed.Timeout.Duration != 30*time.Second || closed.Arrival != "" {
		t.Errorf("closed-loop client: replicas %d, timeout %v, arrival %q; want 1, 30s, none",
			closed.Replicas, closed.Timeout.Duration, closed.Arrival)
	}
	if open.Arrival != ArrivalConstant {
		t.Errorf("open-loop client: arrival %q, want constant", open.Arrival)
	}
	want := Connections{Reuse: ReuseShared, MaxPerHost: ptr(0), MaxIdlePerHost: ptr(0),
		IdleTimeout: &metav1.Duration{}, MaxLifetime: &metav1.Duration{}, Protocol: ProtocolHTTP1}
	if !reflect.DeepEqual(closed.Connections, want) {
		t.Errorf("connections %s, want %s", fmtConn(closed.Connections), fmtConn(want))
	}

	sc, _, diags = Load("f.yaml", []byte(edit(t, "  services:", "  cluster: {proxyMode: ipvs}\n  services:")), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if s := sc.Spec.Cluster.IPVSScheduler; s != IPVSRoundRobin {
		t.Errorf("ipvsScheduler with ipvs: %q, want rr", s)
	}
}

func TestDefaultsLibrary(t *testing.T) {
	// Whatever the profiles hold, a client naming one gets its connection values and
	// timeout, and fields the user sets win over them.
	for _, name := range library.Names() {
		p, _ := library.Lookup(name)
		if p.Protocol == ProtocolHTTP2 {
			continue // not loadable yet; TestLibraryHTTP2 covers it
		}
		t.Run(name, func(t *testing.T) {
			in := edit(t, "    threads: 2", "    threads: 2\n    library: "+name)
			sc, _, diags := Load("f.yaml", []byte(in), nil)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			want := Connections{Reuse: p.Reuse, MaxPerHost: &p.MaxPerHost, MaxIdlePerHost: &p.MaxIdlePerHost,
				IdleTimeout: &metav1.Duration{Duration: p.IdleTimeout}, MaxLifetime: &metav1.Duration{Duration: p.MaxLifetime},
				Protocol: p.Protocol}
			if got := sc.Spec.Clients[0].Connections; !reflect.DeepEqual(got, want) {
				t.Errorf("connections %s, want the profile's %s", fmtConn(got), fmtConn(want))
			}
			wantTimeout := p.Timeout
			if wantTimeout == 0 {
				wantTimeout = 30 * time.Second
			}
			if got := sc.Spec.Clients[0].Timeout.Duration; got != wantTimeout {
				t.Errorf("timeout %v, want %v", got, wantTimeout)
			}

			in = edit(t, "    threads: 2", "    threads: 2\n    library: "+name+
				"\n    timeout: 7s\n    connections: {reuse: none, maxIdlePerHost: 77, maxLifetime: 5m}")
			sc, _, diags = Load("f.yaml", []byte(in), nil)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			want.Reuse, want.MaxIdlePerHost, want.MaxLifetime = ReuseNone, ptr(77), &metav1.Duration{Duration: 5 * time.Minute}
			if got := sc.Spec.Clients[0].Connections; !reflect.DeepEqual(got, want) {
				t.Errorf("connections %s, want %s", fmtConn(got), fmtConn(want))
			}
			if got := sc.Spec.Clients[0].Timeout.Duration; got != 7*time.Second {
				t.Errorf("timeout %v, want the explicit 7s", got)
			}
		})
	}
}

// TestDefaultsGo checks one profile by value: Go's DefaultTransport keeps 2 idle
// connections per host for 90s and opens as many as it needs.
func TestDefaultsGo(t *testing.T) {
	sc := mustLoad(t, edit(t, "    threads: 2", "    threads: 2\n    library: go-net-http"))
	want := Connections{Reuse: ReuseShared, MaxPerHost: ptr(0), MaxIdlePerHost: ptr(2),
		IdleTimeout: &metav1.Duration{Duration: 90 * time.Second}, MaxLifetime: &metav1.Duration{}, Protocol: ProtocolHTTP1}
	if got := sc.Spec.Clients[0].Connections; !reflect.DeepEqual(got, want) {
		t.Errorf("connections %s, want %s", fmtConn(got), fmtConn(want))
	}
}

// TestLibraryHTTP2 checks that http2 coming from a library's profile, not from the user,
// is blamed on the library with the way out. No profile need speak http2 today, so the
// test plays the profile's part between decoding and defaulting.
func TestLibraryHTTP2(t *testing.T) {
	in := edit(t, "    threads: 2", "    threads: 2\n    library: somelib")
	root, diag := parse("f.yaml", []byte(in))
	if diag != nil {
		t.Fatal(diag)
	}
	var s Scenario
	pos, diags := decode("f.yaml", root, nil, &s)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	s.Spec.Clients[0].Connections.Protocol = ProtocolHTTP2
	setDefaults(&s)
	got := validate(&s, pos).Error()
	want := "f.yaml:15:14: spec.clients[0].library: library somelib speaks http2, which is not modelled yet (it arrives with the TCP/HTTP2 model); set connections.protocol: http1"
	if !strings.Contains(got, want) {
		t.Errorf("diagnostics:\n%s\nwant one containing:\n%s", got, want)
	}
}

func mustLoad(t *testing.T, in string) *Scenario {
	t.Helper()
	sc, _, diags := Load("f.yaml", []byte(in), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return sc
}

func ptr[T any](v T) *T { return &v }

func fmtConn(c Connections) string {
	deref := func(p *int) any {
		if p == nil {
			return nil
		}
		return *p
	}
	dur := func(p *metav1.Duration) any {
		if p == nil {
			return nil
		}
		return p.Duration
	}
	return fmt.Sprintf("{reuse %s, maxPerHost %v, maxIdlePerHost %v, idleTimeout %v, maxLifetime %v, protocol %s}",
		c.Reuse, deref(c.MaxPerHost), deref(c.MaxIdlePerHost), dur(c.IdleTimeout), dur(c.MaxLifetime), c.Protocol)
}

// full is DESIGN.md's example scenario with the optional fields added.
const full = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: clusterip-reuse, description: uneven load}
spec:
  duration: 60s
  seed: 1
  cluster:
    proxyMode: iptables        # iptables | nftables | ipvs | userspace
    nodes:
    - {name: worker, count: 3, cpu: "2"}
    - {name: big, count: 1}
    network: {latency: 100us, localLatency: 10us}
  services:
  - name: webapp1
    replicas: 5
    pod:
      cpu: "1"
      concurrency: 0
      serviceTime: {distribution: exponential, mean: 1ms}
      waitTime: {distribution: lognormal, mean: 2ms, p99: 20ms}
      acceptCost: 50us
  - name: db
    replicas: 1
    pod:
      cpu: 500m
      serviceTime: {distribution: empirical, samples: [1ms, 2ms, 10ms]}
  clients:
  - name: caller
    target: webapp1
    replicas: 1
    threads: 5
    timeout: 10s
    thinkTime: {distribution: uniform, min: 1ms, max: 3ms}
    overhead: 2ms
    connections:
      reuse: per-thread
      maxPerHost: 0
      protocol: http1
  - name: loader
    target: db
    replicas: 2
    rate: 1000/s
    arrival: poisson
    maxInFlight: 64
    connections: {reuse: none, idleTimeout: 1m30s}
`

func TestLoadFull(t *testing.T) {
	sc, pos, diags := Load("f.yaml", []byte(full), nil)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	ms := func(n float64) metav1.Duration {
		return metav1.Duration{Duration: time.Duration(n * float64(time.Millisecond))}
	}
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	want := &Scenario{
		APIVersion: APIVersion,
		Kind:       Kind,
		Metadata:   Metadata{Name: "clusterip-reuse", Description: "uneven load"},
		Spec: Spec{
			Duration: ms(60000),
			Seed:     1,
			Cluster: Cluster{
				ProxyMode: ProxyIptables,
				Nodes:     []NodePool{{Name: "worker", Count: 3, CPU: q("2")}, {Name: "big", Count: 1}},
				Network:   Network{Latency: ms(0.1), LocalLatency: ptr(ms(0.01))},
			},
			Services: []Service{
				{Name: "webapp1", Replicas: 5, Pod: Pod{
					CPU:         q("1"),
					ServiceTime: Distribution{Distribution: DistExponential, Mean: ms(1)},
					WaitTime:    &Distribution{Distribution: DistLognormal, Mean: ms(2), P99: ms(20)},
					AcceptCost:  ms(0.05),
				}},
				{Name: "db", Replicas: 1, Pod: Pod{
					CPU:         q("500m"),
					ServiceTime: Distribution{Distribution: DistEmpirical, Samples: []metav1.Duration{ms(1), ms(2), ms(10)}},
				}},
			},
			Clients: []Client{
				{Name: "caller", Target: "webapp1", Replicas: 1, Threads: 5, Timeout: ptr(ms(10000)),
					ThinkTime: &Distribution{Distribution: DistUniform, Min: ms(1), Max: ms(3)},
					Overhead:  ms(2),
					Connections: Connections{Reuse: ReusePerThread, MaxPerHost: ptr(0), MaxIdlePerHost: ptr(0),
						IdleTimeout: ptr(ms(0)), MaxLifetime: ptr(ms(0)), Protocol: ProtocolHTTP1}},
				{Name: "loader", Target: "db", Replicas: 2, Rate: &Rate{PerSecond: 1000}, Arrival: ArrivalPoisson,
					MaxInFlight: 64, Timeout: ptr(ms(30000)),
					Connections: Connections{Reuse: ReuseNone, MaxPerHost: ptr(0), MaxIdlePerHost: ptr(0),
						IdleTimeout: ptr(ms(90000)), MaxLifetime: ptr(ms(0)), Protocol: ProtocolHTTP1}},
			},
		},
	}
	if !reflect.DeepEqual(sc, want) {
		t.Errorf("decoded\n%+v\nwant\n%+v", sc, want)
	}

	for path, want := range map[string][2]int{
		"":                          {1, 1},
		"spec":                      {5, 3},
		"spec.cluster.nodes[0].cpu": {10, 37},
		"spec.services[1]":          {22, 5},
		"spec.services[1].pod.cpu":  {25, 12},
		"spec.services[1].pod.serviceTime.samples[2]": {26, 66},
		"spec.clients[0].target":                      {29, 13},
		"spec.clients[1].connections.idleTimeout":     {45, 45},
	} {
		line, col, ok := pos.Lookup(path)
		if !ok || line != want[0] || col != want[1] {
			t.Errorf("Lookup(%q) = %d, %d, %v; want %d, %d", path, line, col, ok, want[0], want[1])
		}
	}
	if _, _, ok := pos.Lookup("spec.clients[0].rate"); ok {
		t.Error("Lookup of an absent field is ok")
	}
}
