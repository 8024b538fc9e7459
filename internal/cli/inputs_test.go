package cli

import (
	"strings"
	"testing"
	"time"
)

// TestValidateHugeSizesIsQuick: sizes that hung validate or ran it out of memory
// (it built the engine, a pod or a node at a time) are errors at once, naming the
// limit. Loading a 20-line file takes milliseconds; one second is far from any
// engine with a million pods or nodes.
func TestValidateHugeSizesIsQuick(t *testing.T) {
	f := writeTemp(t, "s.yaml", good)
	for _, sets := range [][]string{
		{"spec.services[0].replicas=1000000000000"},
		{"spec.clients[0].threads=1000000000"},
		{"spec.cluster.nodes[0].name=n", "spec.cluster.nodes[0].count=100000000"},
		{"spec.clients[0].threads=", "spec.clients[0].rate=1000000000000/s"},
	} {
		args := []string{"validate", f}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		start := time.Now()
		code, _, errOut := runCLI(args...)
		if took := time.Since(start); took > time.Second {
			t.Errorf("%v: took %s", sets, took)
		}
		if code != exitBadInput || !strings.Contains(errOut, "is over the limit of") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and the limit", sets, code, errOut)
		}
	}
}

// TestLongRunIsAnnounced: a run estimated to take longer than longRun says so on
// stderr before it starts, though stderr is no terminal here; a short one does not.
func TestLongRunIsAnnounced(t *testing.T) {
	f := writeTemp(t, "s.yaml", good)
	for _, tc := range []struct {
		longRun time.Duration
		want    bool
	}{{longRun, false}, {0, true}} {
		defer func(d time.Duration) { longRun = d }(longRun)
		longRun = tc.longRun
		for _, verb := range [][]string{{"simulate", f, "-q"}, {"sweep", f, "-q", "--set", "spec.services[0].replicas=2,3"}} {
			code, _, errOut := runCLI(verb...)
			if code != exitOK {
				t.Fatalf("%v: exit %d: %s", verb, code, errOut)
			}
			if got := strings.Contains(errOut, "simulated requests: about"); got != tc.want {
				t.Errorf("%v with longRun %s: stderr %q; announced %v, want %v", verb, tc.longRun, errOut, got, tc.want)
			}
		}
	}
}

func TestRoughly(t *testing.T) {
	for _, tc := range []struct {
		s    float64
		want string
	}{{12, "12 seconds"}, {90, "1.5 minutes"}, {7200, "2 hours"}, {3 * 86400, "3 days"}, {2 * 365 * 86400, "2 years"}} {
		if got := roughly(tc.s); got != tc.want {
			t.Errorf("roughly(%g) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

// TestFlagErrorsNameTheFlag: --duration and --seed are checked as the --set values
// they stand for, but an error names the flag that was typed, in every verb.
func TestFlagErrorsNameTheFlag(t *testing.T) {
	f := writeTemp(t, "s.yaml", good)
	for _, args := range [][]string{
		{"simulate", f, "--duration", "-1s"},
		{"emulate", f, "--duration", "-1s"},
		{"sweep", f, "--duration", "-1s", "--set", "spec.services[0].replicas=2,3"},
	} {
		code, _, errOut := runCLI(args...)
		if code != exitBadInput || !strings.Contains(errOut, "s.yaml: --duration -1s: spec.duration:") || strings.Contains(errOut, "--set spec.duration") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and the error on --duration -1s", args, code, errOut)
		}
	}
	code, _, errOut := runCLI("simulate", f, "--duration", "10000h", "--seed", "3")
	if code != exitBadInput || !strings.Contains(errOut, "s.yaml: --duration 10000h0m0s: spec.duration: duration 10000h0m0s is over the limit") {
		t.Errorf("exit %d, stderr %q; want the limit on --duration", code, errOut)
	}
}

// TestValidateFindsWhatOnlySetUpFinds: validate does not build the engine, but still
// reports what only its set-up finds, at the field.
func TestValidateFindsWhatOnlySetUpFinds(t *testing.T) {
	f := writeTemp(t, "s.yaml", good)
	for _, tc := range []struct{ set, want string }{
		{"spec.services[0].pod.serviceTime={distribution: lognormal, mean: 1ms, p99: 20ms}",
			"s.yaml: --set spec.services[0].pod.serviceTime={distribution: lognormal, mean: 1ms, p99: 20ms}: spec.services[0].pod.serviceTime: a lognormal with mean 1ms cannot have p99 20ms"},
		// The client, at its line, since its replicas are not written.
		{"spec.cluster.nodes=[{name: n, count: 1, taints: [{key: a, effect: NoSchedule}]}]",
			"s.yaml:12:5: spec.clients[0].replicas: pod caller-0 cannot be scheduled"},
	} {
		code, _, errOut := runCLI("validate", f, "--set", tc.set)
		if code != exitBadInput || !strings.Contains(errOut, tc.want) {
			t.Errorf("--set %s: exit %d, stderr %q; want 2 and %q", tc.set, code, errOut, tc.want)
		}
	}
}

// TestFlowValuesInSetAndSweep: a --set value in braces is a YAML flow mapping, in
// simulate and as the points of a sweep.
func TestFlowValuesInSetAndSweep(t *testing.T) {
	f := writeTemp(t, "s.yaml", good)
	code, out, errOut := runCLI("simulate", f, "-q", "-o", "json", "--set", "spec.services[0].pod.serviceTime={distribution: constant, value: 1ms}")
	if code != exitOK || !strings.Contains(out, `"requests"`) {
		t.Fatalf("simulate: exit %d: %s", code, errOut)
	}
	code, out, errOut = runCLI("sweep", f, "-q", "-o", "csv", "--set",
		"spec.services[0].pod.serviceTime={distribution: constant, value: 1ms},{distribution: constant, value: 2ms}")
	if code != exitOK {
		t.Fatalf("sweep: exit %d: %s", code, errOut)
	}
	if lines := strings.Count(strings.TrimSpace(out), "\n"); lines != 2 {
		t.Errorf("sweep: %d rows, want 2:\n%s", lines, out)
	}
}
