package reference

import (
	"slices"
	"testing"

	"trafficlab/model/kubeproxy"
	"trafficlab/model/library"
	"trafficlab/scenario"
)

// The probe finds validation's sets, including those checked only in one mode
// (ipvsScheduler with ipvs) or inside a list (retryOn), and in Kubernetes' types.
func TestEnumsAreValidationsSets(t *testing.T) {
	e := Enums()
	for _, tc := range []struct {
		field string
		want  []string
	}{
		{"trafficlab/scenario.Cluster.ProxyMode", kubeproxy.Names()},
		{"trafficlab/scenario.Cluster.IPVSScheduler", []string{scenario.IPVSRoundRobin, scenario.IPVSLeastConnection, scenario.IPVSSourceHashing, scenario.IPVSShortestExpected, scenario.IPVSNeverQueue}},
		{"trafficlab/scenario.Distribution.Distribution", []string{scenario.DistConstant, scenario.DistExponential, scenario.DistLognormal, scenario.DistUniform, scenario.DistEmpirical}},
		{"trafficlab/scenario.Client.Library", library.Names()},
		{"trafficlab/scenario.Sidecar.LBPolicy", []string{scenario.LBRoundRobin, scenario.LBLeastRequest, scenario.LBRandom}},
		{"trafficlab/scenario.Fault.Kind", []string{scenario.FaultLoss, scenario.FaultDelay, scenario.FaultBandwidth, scenario.FaultPartition, scenario.FaultPodKill}},
		{"trafficlab/scenario.Scenario.APIVersion", []string{scenario.APIVersion}},
		{"k8s.io/api/core/v1.Toleration.Operator", []string{"Exists", "Equal"}},
	} {
		got := slices.Clone(e[tc.field])
		want := slices.Clone(tc.want)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: enum %v, want %v", tc.field, got, want)
		}
	}
	if retry := e["trafficlab/scenario.Retries.RetryOn"]; !slices.Contains(retry, "connect-failure") {
		t.Errorf("retryOn's set was not found: %v", retry)
	}
	// Free-form strings have no set.
	for _, free := range []string{"trafficlab/scenario.Service.Name", "trafficlab/scenario.Client.Target", "trafficlab/scenario.Metadata.Description"} {
		if vals, ok := e[free]; ok {
			t.Errorf("%s has an enum %v; it is free-form", free, vals)
		}
	}
}
