package cluster

import (
	"strings"
	"testing"

	"trafficlab/examples"
	"trafficlab/scenario"
)

// Each input the cluster engine does not carry out is said, and a scenario that
// has none of them gets no sentence.
func TestUnplayed(t *testing.T) {
	for _, tc := range []struct {
		file string
		sets []string
		want []string
	}{
		{"r1-reused-client-1-thread.yaml", nil, []string{"spec.cluster.network: the cluster's own network carries the traffic, without the scenario's latency 100µs"}},
		{"r1-reused-client-1-thread.yaml", []string{"spec.cluster.network.latency=0s"}, nil},
		// Rollouts are started, as kubectl rollout restart does.
		{"r1-reused-client-1-thread.yaml", []string{"spec.cluster.network.latency=0s", "spec.services[0].rollouts=[{at: 2s}, {at: 5s}]"}, nil},
		{"r4-http2-vs-http1-loss.yaml", nil, []string{"spec.cluster.network: the cluster's own network carries the traffic, without the scenario's latency 100µs, 1 link override(s)", "service nginx: its pods run without the sidecar proxy", "client vegeta: its pods run without the sidecar proxy"}},
		{"r3-noisy-neighbour.yaml", nil, []string{"spec.cluster.network:", "background workload batch-writer is not run"}},
		{"calls-retry-storm.yaml", nil, []string{"spec.cluster.network:", "fault slow-db (delay at 2s) is not injected"}},
	} {
		t.Run(tc.file+strings.Join(tc.sets, ","), func(t *testing.T) {
			data, err := examples.Get(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			sc, _, diags := scenario.Load(tc.file, data, tc.sets)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			got := unplayed(sc)
			if len(got) != len(tc.want) {
				t.Fatalf("said %q, want %d sentences", got, len(tc.want))
			}
			for i, want := range tc.want {
				if !strings.HasPrefix(got[i], want) {
					t.Errorf("said %q, want it to start %q", got[i], want)
				}
			}
		})
	}
}
