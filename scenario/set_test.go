package scenario

import (
	"strings"
	"testing"
	"time"
)

func TestSet(t *testing.T) {
	cases := []struct {
		name  string
		extra string // appended to base
		sets  []string
		check func(*Scenario) bool
	}{
		{"override an int", "", []string{"spec.services[0].replicas=8"},
			func(s *Scenario) bool { return s.Spec.Services[0].Replicas == 8 }},
		{"override a duration", "", []string{"spec.duration=1m30s"},
			func(s *Scenario) bool { return s.Spec.Duration.Duration == 90*time.Second }},
		{"later wins", "", []string{"spec.duration=1s", "spec.duration=2s"},
			func(s *Scenario) bool { return s.Spec.Duration.Duration == 2*time.Second }},
		{"create missing keys", "", []string{"spec.cluster.network.latency=100us"},
			func(s *Scenario) bool { return s.Spec.Cluster.Network.Latency.Duration == 100*time.Microsecond }},
		{"create a pointer", "", []string{"spec.clients[0].connections.maxPerHost=4"},
			func(s *Scenario) bool { return *s.Spec.Clients[0].Connections.MaxPerHost == 4 }},
		{"quantity", "", []string{"spec.services[0].pod.cpu=500m"},
			func(s *Scenario) bool { return s.Spec.Services[0].Pod.CPU.MilliValue() == 500 }},
		{"closed loop to open loop", "", []string{"spec.clients[0].threads=0", "spec.clients[0].rate=1000/s"},
			func(s *Scenario) bool { return s.Spec.Clients[0].Rate.PerSecond == 1000 }},
		{"an empty value unsets", "", []string{"spec.clients[0].threads=", "spec.clients[0].rate=5/s"},
			func(s *Scenario) bool { return s.Spec.Clients[0].Threads == 0 && s.Spec.Clients[0].Rate.PerSecond == 5 }},
		{"append to a list", "", []string{
			"spec.services[1].name=api",
			"spec.services[1].pod.serviceTime.distribution=constant",
			"spec.services[1].pod.serviceTime.value=2ms",
			"spec.clients[0].target=api",
		}, func(s *Scenario) bool {
			return len(s.Spec.Services) == 2 && s.Spec.Services[1].Pod.ServiceTime.Value.Duration == 2*time.Millisecond &&
				s.Spec.Clients[0].Target == "api"
		}},
		{"create a list", "", []string{"spec.cluster.nodes[0].name=big", "spec.cluster.nodes[0].count=2"},
			func(s *Scenario) bool { return len(s.Spec.Cluster.Nodes) == 1 && s.Spec.Cluster.Nodes[0].Count == 2 }},
		{"http2", "", []string{"spec.clients[0].connections.protocol=http2"},
			func(s *Scenario) bool { return s.Spec.Clients[0].Connections.Protocol == ProtocolHTTP2 }},
		{"fill a null", "  cluster:\n", []string{"spec.cluster.network.latency=1ms"},
			func(s *Scenario) bool { return s.Spec.Cluster.Network.Latency.Duration == time.Millisecond }},
		{"a flow mapping", "", []string{"spec.services[0].pod.serviceTime={distribution: constant, value: 1ms}"},
			func(s *Scenario) bool {
				d := s.Spec.Services[0].Pod.ServiceTime
				return d.Distribution == DistConstant && d.Value.Duration == time.Millisecond && d.Mean.Duration == 0
			}},
		{"a flow list", "", []string{"spec.cluster.nodes=[{name: a, count: 2}, {name: b, count: 3, cpu: '2'}]"},
			func(s *Scenario) bool {
				n := s.Spec.Cluster.Nodes
				return len(n) == 2 && n[0].Name == "a" && n[1].Count == 3 && n[1].CPU.Value() == 2
			}},
		{"a flow value inside a created key", "", []string{"spec.clients[0].thinkTime={distribution: exponential, mean: 2ms}"},
			func(s *Scenario) bool { return s.Spec.Clients[0].ThinkTime.Mean.Duration == 2*time.Millisecond }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc, _, diags := Load("f.yaml", []byte(base+tc.extra), tc.sets)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if !tc.check(sc) {
				t.Errorf("--set %v not applied: %+v", tc.sets, sc.Spec)
			}
		})
	}
}

// setErrorCases are bad --set arguments; FuzzSet starts from them too.
var setErrorCases = []struct {
	name string
	set  string
	want string
}{
	{"no equals sign", "spec.duration",
		"f.yaml: --set spec.duration: want PATH=VALUE, e.g. spec.services[0].replicas=8"},
	{"empty path", "=3",
		"f.yaml: --set =3: empty path: want PATH=VALUE, e.g. spec.services[0].replicas=8"},
	{"empty key", "spec..duration=1s",
		`f.yaml: --set spec..duration=1s: bad path "spec..duration": want KEY.KEY[INDEX]..., e.g. spec.services[0].replicas`},
	{"unclosed index", "spec.services[0.replicas=1",
		`f.yaml: --set spec.services[0.replicas=1: bad path "spec.services[0.replicas": want KEY.KEY[INDEX]..., e.g. spec.services[0].replicas`},
	{"index not a number", "spec.services[x].replicas=1",
		`f.yaml: --set spec.services[x].replicas=1: bad path "spec.services[x].replicas": index "x" is not a non-negative integer`},
	{"index first", "[0]=1",
		`f.yaml: --set [0]=1: bad path "[0]": want KEY.KEY[INDEX]..., e.g. spec.services[0].replicas`},
	{"negative index", "spec.services[-1].replicas=1",
		`f.yaml: --set spec.services[-1].replicas=1: bad path "spec.services[-1].replicas": index "-1" is not a non-negative integer`},
	{"index out of range", "spec.services[5].replicas=1",
		"f.yaml: --set spec.services[5].replicas=1: index 5 out of range: spec.services has length 1; index 1 appends"},
	{"index a mapping", "spec[0]=1",
		"f.yaml: --set spec[0]=1: cannot index spec: it is a mapping, not a list"},
	{"key in a scalar", "spec.duration.seconds=1",
		`f.yaml: --set spec.duration.seconds=1: cannot set key "seconds": spec.duration is "10s", not a mapping`},
	{"key in a list", "spec.services.name=x",
		`f.yaml: --set spec.services.name=x: cannot set key "name": spec.services is a list, not a mapping`},
	{"bad value", "spec.duration=10",
		`f.yaml: --set spec.duration=10: spec.duration: invalid duration "10": durations need a unit, e.g. 10ms`},
	{"unknown key", "spec.clients[0].thread=3",
		`f.yaml: --set spec.clients[0].thread=3: unknown field "thread" in spec.clients[0]; known fields: name,`},
	{"invalid value", "spec.clients[0].target=nope",
		`f.yaml: --set spec.clients[0].target=nope: spec.clients[0].target: no service named "nope"; services: web`},
	{"bad flow value", "spec.services[0].pod.serviceTime={distribution: constant, value: 1ms",
		`f.yaml: --set spec.services[0].pod.serviceTime={distribution: constant, value: 1ms: value {distribution: constant, value: 1ms is not a YAML flow mapping or list:`},
	{"flow value and more", "spec.services[0].pod.serviceTime={distribution: constant} x",
		`is not a YAML flow mapping or list: it must end with }`},
	{"two flow documents", "spec.cluster.nodes=[{name: a}]\n---\n[{name: b}]",
		`is not a YAML flow mapping or list: it holds more than one YAML document`},
	// Errors inside a flow value are blamed on the --set that wrote it.
	{"error in a flow value", "spec.services[0].pod.serviceTime={distribution: constant, value: 1}",
		`f.yaml: --set spec.services[0].pod.serviceTime={distribution: constant, value: 1}: spec.services[0].pod.serviceTime.value: invalid duration "1"`},
	// A field missing from an item the --set created is blamed on that --set.
	{"incomplete new item", "spec.services[1].name=api",
		`f.yaml: --set spec.services[1].name=api: spec.services[1].pod.serviceTime: is required`},
}

func TestSetErrors(t *testing.T) {
	cases := setErrorCases
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc, _, diags := Load("f.yaml", []byte(base), []string{tc.set})
			if sc != nil || !diags.HasErrors() {
				t.Fatalf("--set %s: no error; diagnostics: %v", tc.set, diags)
			}
			if got := diags.Error(); !strings.Contains(got, tc.want) {
				t.Errorf("diagnostics:\n%s\nwant one containing:\n%s", got, tc.want)
			}
		})
	}
}

// TestSetErrorsFirst checks that --set problems, which have no line, come before the
// file's, and that a failed --set does not stop the others.
func TestSetErrorsFirst(t *testing.T) {
	in := strings.Replace(base, "threads: 2", "threads: two", 1)
	_, _, diags := Load("f.yaml", []byte(in), []string{"spec.duration=5s", "spec.x", "spec.seed=1"})
	checkLines(t, diags, []string{
		"f.yaml: --set spec.x: want PATH=VALUE",
		`f.yaml:14:14: spec.clients[0].threads: expected an integer, got "two"`,
	})
}

func TestSetPositions(t *testing.T) {
	_, pos, diags := Load("f.yaml", []byte(base), []string{"spec.services[0].replicas=3"})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if _, _, ok := pos.Lookup("spec.services[0].replicas"); ok {
		t.Error("a value from --set has a file position")
	}
	if line, col, ok := pos.Lookup("spec.services[0].name"); !ok || line != 7 || col != 11 {
		t.Errorf("Lookup(spec.services[0].name) = %d, %d, %v; want 7, 11", line, col, ok)
	}
}
