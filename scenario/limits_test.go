package scenario

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var (
	// sizeHPA gives the base's pods the CPU an autoscaler needs.
	sizeHPA = []string{"spec.services[0].pod.cpu=1"}
	// sizePhases turns the base's client into one of phases.
	sizePhases = []string{"spec.clients[0].threads=", "spec.clients[0].phases[0].threads=2", "spec.clients[0].phases[0].duration=1s"}
)

// sizeOpenLoop is an open loop whose requests last at most timeout.
func sizeOpenLoop(rate, timeout string) []string {
	return []string{"spec.clients[0].threads=", "spec.clients[0].rate=" + rate, "spec.clients[0].timeout=" + timeout}
}

// sizeLimitCases are the --sets that put a size at its limit (ok) and just over it
// (over), with the field whose error names the limit.
var sizeLimitCases = []struct {
	name        string
	ok, over    []string
	path, limit string
}{
	// base has 2 service pods and 1 client pod: each size just over the limit is
	// over it on its own, and totals are checked by the field that crosses.
	{"service replicas", []string{"spec.services[0].replicas=9999"}, []string{"spec.services[0].replicas=10001"},
		"spec.services[0].replicas", "10000 pods a run"},
	{"huge service replicas", nil, []string{"spec.services[0].replicas=1000000000000"},
		"spec.services[0].replicas", "10000 pods a run"},
	{"client replicas", []string{"spec.clients[0].replicas=9998", "spec.clients[0].threads=1"}, []string{"spec.clients[0].replicas=9999", "spec.clients[0].threads=1"},
		"spec.clients[0].replicas", "10000 pods a run"},
	{"autoscaler maxReplicas", append([]string{"spec.services[0].autoscaler.maxReplicas=9999"}, sizeHPA...),
		append([]string{"spec.services[0].autoscaler.maxReplicas=10001"}, sizeHPA...), "spec.services[0].autoscaler.maxReplicas", "10000 pods a run"},
	{"rollouts", []string{"spec.services[0].replicas=4999", "spec.services[0].rollouts[0].at=1s"},
		[]string{"spec.services[0].replicas=5001", "spec.services[0].rollouts[0].at=1s"}, "spec.services[0].rollouts[0]", "10000 pods a run"},
	{"huge replicas with rollouts", nil, []string{"spec.services[0].replicas=9000000000000000000", "spec.services[0].rollouts[0].at=1s",
		"spec.services[0].rollouts[1].at=2s", "spec.services[0].rollouts[2].at=3s"}, "spec.services[0].replicas", "10000 pods a run"},
	{"node pool", []string{"spec.cluster.nodes[0].name=n", "spec.cluster.nodes[0].count=5000"},
		[]string{"spec.cluster.nodes[0].name=n", "spec.cluster.nodes[0].count=5001"}, "spec.cluster.nodes[0].count", "5000 nodes"},
	{"node pools together", []string{"spec.cluster.nodes[0].name=n", "spec.cluster.nodes[0].count=2500", "spec.cluster.nodes[1].name=m", "spec.cluster.nodes[1].count=2500"},
		[]string{"spec.cluster.nodes[0].name=n", "spec.cluster.nodes[0].count=2500", "spec.cluster.nodes[1].name=m", "spec.cluster.nodes[1].count=2501"},
		"spec.cluster.nodes[1].count", "5000 nodes"},
	{"huge node pool", nil, []string{"spec.cluster.nodes[0].name=n", "spec.cluster.nodes[0].count=100000000"}, "spec.cluster.nodes[0].count", "5000 nodes"},
	{"threads", []string{"spec.clients[0].threads=1000000"}, []string{"spec.clients[0].threads=1000001"},
		"spec.clients[0].threads", "1000000 threads a run"},
	{"threads of every client pod", []string{"spec.clients[0].threads=100000", "spec.clients[0].replicas=10"},
		[]string{"spec.clients[0].threads=100000", "spec.clients[0].replicas=11"}, "spec.clients[0].threads", "1000000 threads a run"},
	{"phase threads", append(sizePhases, "spec.clients[0].phases[1].threads=1000000", "spec.clients[0].phases[1].duration=1s"),
		append(sizePhases, "spec.clients[0].phases[1].threads=1000001", "spec.clients[0].phases[1].duration=1s"),
		"spec.clients[0].phases[1].threads", "1000000 threads a run"},
	{"huge rate", nil, sizeOpenLoop("1000000000000/s", "30s"), "spec.clients[0].rate", "1000000000/s a client pod"},
	{"rate", sizeOpenLoop("1000000000/s", "30s"), sizeOpenLoop("1100000000/s", "30s"), "spec.clients[0].rate", "1000000000/s a client pod"},
	{"phase rate", append(sizePhases, "spec.clients[0].phases[1].rate=1000000000/s", "spec.clients[0].phases[1].duration=1s"),
		append(sizePhases, "spec.clients[0].phases[1].rate=1000000001/s", "spec.clients[0].phases[1].duration=1s"),
		"spec.clients[0].phases[1].rate", "1000000000/s a client pod"},
	{"duration", []string{"spec.duration=8760h"}, []string{"spec.duration=8761h"}, "spec.duration", "8760h"},
	{"other durations", []string{"spec.clients[0].timeout=8760h"}, []string{"spec.clients[0].timeout=8761h"}, "spec.clients[0].timeout", "8760h"},
	{"body bytes", []string{"spec.clients[0].request.bodyBytes=2147483647"}, []string{"spec.clients[0].request.bodyBytes=2Gi"},
		"spec.clients[0].request.bodyBytes", "2147483647 bytes"},
	{"response bytes", []string{"spec.services[0].pod.responseBytes=2147483647"}, []string{"spec.services[0].pod.responseBytes=2147483648"},
		"spec.services[0].pod.responseBytes", "2147483647 bytes"},
	{"header bytes", []string{"spec.clients[0].request.headerBytes=2147483647"}, []string{"spec.clients[0].request.headerBytes=2147483648"},
		"spec.clients[0].request.headerBytes", "2147483647 bytes"},
	{"grace period", []string{"spec.services[0].pod.terminationGracePeriodSeconds=31536000"},
		[]string{"spec.services[0].pod.terminationGracePeriodSeconds=31536001"}, "spec.services[0].pod.terminationGracePeriodSeconds", "31536000 seconds"},
	{"samples", []string{"spec.report.samples=1000000"}, []string{"spec.report.samples=1000001"}, "spec.report.samples", "1000000 requests"},
	{"repeat", append([]string{"spec.clients[0].repeat=100000"}, sizePhases...), append([]string{"spec.clients[0].repeat=100001"}, sizePhases...),
		"spec.clients[0].repeat", "100000 runs"},
	// base runs 10 s: 1e8 events are one every 100 ns, 1e6 curve segments of
	// 1,440 a period one period every 14.4 ms.
	{"HPA sync period", append([]string{"spec.services[0].autoscaler.maxReplicas=3", "spec.services[0].autoscaler.controller.syncPeriod=100ns"}, sizeHPA...),
		append([]string{"spec.services[0].autoscaler.maxReplicas=3", "spec.services[0].autoscaler.controller.syncPeriod=99ns"}, sizeHPA...),
		"spec.services[0].autoscaler.controller.syncPeriod", "100000000 events a run"},
	{"rate curve period", []string{"spec.clients[0].threads=", "spec.clients[0].rateCurve={diurnal: {min: 1/s, max: 2/s, period: 14.4ms}}"},
		[]string{"spec.clients[0].threads=", "spec.clients[0].rateCurve={diurnal: {min: 1/s, max: 2/s, period: 14.3ms}}"},
		"spec.clients[0].rateCurve.diurnal.period", "1000000 segments a run"},
	{"background diurnal period", []string{"spec.background[0]={name: bg, cpu: '1', schedule: {diurnal: {period: 144us}}}"},
		[]string{"spec.background[0]={name: bg, cpu: '1', schedule: {diurnal: {period: 143us}}}"},
		"spec.background[0].schedule.diurnal.period", "100000000 events a run"},
	{"bursts", []string{"spec.background[0]={name: bg, cpu: '1', schedule: {bursts: {every: 200ns, length: 100ns}}}"},
		[]string{"spec.background[0]={name: bg, cpu: '1', schedule: {bursts: {every: 199ns, length: 100ns}}}"},
		"spec.background[0].schedule.bursts.every", "100000000 events a run"},
	// 1e8 writes of 10 bytes over 10 s: 100,000,000 bytes a second.
	{"background writes", []string{"spec.background[0]={name: bg, diskWriteBytesPerSecond: 100M, diskWriteChunkBytes: 10}"},
		[]string{"spec.background[0]={name: bg, diskWriteBytesPerSecond: 100M, diskWriteChunkBytes: 9}"},
		"spec.background[0].diskWriteChunkBytes", "100000000 events a run"},
	{"sidecar workers of every pod", []string{"spec.services[0].replicas=1000", "spec.services[0].sidecar.concurrency=1000"},
		[]string{"spec.services[0].replicas=1001", "spec.services[0].sidecar.concurrency=1000"},
		"spec.services[0].sidecar.concurrency", "1000000 workers a run"},
	{"sidecar workers", []string{"spec.services[0].sidecar.concurrency=1024"}, []string{"spec.services[0].sidecar.concurrency=1025"},
		"spec.services[0].sidecar.concurrency", "1024 workers"},
}

// TestSizeLimits sets each size just at its limit, which loads, and just over it,
// which is an error at the field that names the limit.
func TestSizeLimits(t *testing.T) {
	for _, tc := range sizeLimitCases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.ok != nil {
				if _, _, diags := Load("f.yaml", []byte(base), tc.ok); diags.HasErrors() {
					t.Errorf("at the limit: %v", diags)
				}
			}
			_, _, diags := Load("f.yaml", []byte(base), tc.over)
			want := fmt.Sprintf("%s: ", tc.path)
			found := false
			for _, d := range diags {
				if d.Severity == Error && strings.HasPrefix(d.Msg, want) && strings.Contains(d.Msg, "over the limit of "+tc.limit) {
					found = true
				}
			}
			if !found {
				t.Errorf("over the limit: %v; want an error at %s naming the limit %q", diags, tc.path, tc.limit)
			}
		})
	}
}

// TestSizeErrorsArePositioned: a size over its limit written in the file is
// reported at its line and column, and the checks that list nodes do not run.
func TestSizeErrorsArePositioned(t *testing.T) {
	in := edit(t, "  services:", "  cluster:\n    nodes:\n    - {name: n, count: 100000000}\n  services:")
	_, _, diags := Load("f.yaml", []byte(in), nil)
	checkLines(t, diags, []string{"f.yaml:8:24: spec.cluster.nodes[0].count: count 100000000 is over the limit of 5000 nodes a run (Kubernetes' own limit of a cluster); model the nodes the pods run on, and scale the load with them"})
}

// TestDiurnalStepIsANanosecondAtLeast: a background workload's diurnal intensity
// moves every period/1440; a shorter step than the clock's nanosecond is 0, and the
// run would never leave its first instant.
func TestDiurnalStepIsANanosecondAtLeast(t *testing.T) {
	for _, tc := range []struct {
		period string
		err    bool
	}{{"1440ns", false}, {"1439ns", true}} {
		_, _, diags := Load("f.yaml", []byte(base), []string{"spec.duration=1ms",
			"spec.background[0]={name: bg, cpu: '1', schedule: {diurnal: {period: " + tc.period + "}}}"})
		got := strings.Contains(diags.Error(), "spec.background[0].schedule.diurnal.period: must be at least 1.44µs")
		if got != tc.err || diags.HasErrors() != tc.err {
			t.Errorf("period %s: %v; want an error %v", tc.period, diags, tc.err)
		}
	}
}

// TestNullUnsetsAgainstRateCurve: --set FIELD= unsets a field, so a closed loop can
// become a rate curve from the command line.
func TestNullUnsetsAgainstRateCurve(t *testing.T) {
	_, _, diags := Load("f.yaml", []byte(base), []string{"spec.clients[0].threads=", "spec.clients[0].rateCurve={points: [{at: 0s, rate: 5/s}]}"})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	_, _, diags = Load("f.yaml", []byte(base), []string{"spec.clients[0].rateCurve={points: [{at: 0s, rate: 5/s}]}"})
	checkLines(t, diags, []string{"f.yaml:14:14: spec.clients[0].threads: cannot be set with rateCurve"})
}

// TestAliasesExpandBoundedly: three levels of 300 aliases each, 9 kB of YAML, stand
// for 27 million values; decoding them all hung validate. Aliases that repeat a
// few values load as before.
//
// The bound is relative, as the machine is shared: 44 × 44 × 44 aliases, 85,184
// values with their lists just under the limit, load first and time about the work
// the limit allows. The bomb may take ten times that; expanding its 27 million
// values would take over 300 times.
func TestAliasesExpandBoundedly(t *testing.T) {
	bomb := func(k int) string {
		values := "&v [" + strings.Repeat("aaaaaaaa,", k-1) + "aaaaaaaa]"
		term := "&t {matchExpressions: [&r {key: a, operator: In, values: " + values + "}" + strings.Repeat(", *r", k-1) + "]}"
		pod := "      serviceTime: {distribution: exponential, mean: 1ms}\n" +
			"      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [" +
			term + strings.Repeat(", *t", k-1) + "]}}}"
		return edit(t, "      serviceTime: {distribution: exponential, mean: 1ms}", pod)
	}
	// Each timed three times: the allowed work's slowest, the bomb's fastest, so a
	// moment of a busy machine does not decide.
	timed := func(doc string) (fastest, slowest time.Duration, diags Diagnostics) {
		for i := range 3 {
			start := time.Now()
			_, _, diags = Load("f.yaml", []byte(doc), nil)
			took := time.Since(start)
			if i == 0 || took < fastest {
				fastest = took
			}
			slowest = max(slowest, took)
		}
		return fastest, slowest, diags
	}
	_, allowed, diags := timed(bomb(44))
	if strings.Contains(diags.Error(), "aliases") {
		t.Fatalf("85,184 values refused: %v", diags)
	}
	took, _, diags := timed(bomb(300))
	t.Logf("the bomb took %s, 85,184 values %s", took, allowed)
	if took > 10*allowed {
		t.Errorf("took %s, over ten times the %s of 85,184 values", took, allowed)
	}
	if !strings.Contains(diags.Error(), "aliases repeat over 100000 values here") {
		t.Errorf("diagnostics: %v", diags)
	}
	// 3 × 3 × 3 values load without a word on aliases.
	if _, _, diags := Load("f.yaml", []byte(bomb(3)), nil); strings.Contains(diags.Error(), "aliases") {
		t.Errorf("small aliases refused: %v", diags)
	}
	reuse := edit(t, "    replicas: 2", "    replicas: 2\n    rollouts: [&r {at: 1s}, *r]")
	if _, _, diags := Load("f.yaml", []byte(reuse), nil); diags.HasErrors() {
		t.Errorf("an anchor used twice: %v", diags)
	}
}
