package report_test

import (
	"strings"
	"testing"

	"trafficlab/report"
	"trafficlab/result"
)

const grpcPinned = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: grpc-pinning}
spec:
  duration: 20s
  seed: 1
  cluster:
    nodes: [{name: worker, count: 2, cpu: "4"}]
  services:
  - name: orders
    replicas: 5
    pod:
      cpu: "1"
      serviceTime: {distribution: exponential, mean: 1ms}
  clients:
  - name: checkout
    target: orders
    replicas: 2
    threads: 8
    library: grpc-go
    thinkTime: {distribution: exponential, mean: 5ms}
`

// The uneven spread of gRPC channels is explained with gRPC's fixes, not an
// HTTP pool's (no connections.maxLifetime, which a gRPC client has not); a
// server that already ages its connections is not told to.
func TestGRPCSpreadAdvice(t *testing.T) {
	for _, c := range []struct {
		name       string
		sets       []string
		want, lack []string
	}{
		{"pinned", nil,
			[]string{"A gRPC channel keeps its connection (pick_first)", "pod.grpc.maxConnectionAge: each channel reconnects", "headless"},
			[]string{"connections.maxLifetime", "a larger pool"}},
		{"aged", []string{"spec.services[0].pod.grpc={maxConnectionAge: 5s}"},
			[]string{"the server ends each after 5s", "a shorter age"},
			[]string{"connections.maxLifetime", "have the server end"}},
		{"HTTP/1.1 clients", []string{"spec.clients[0].library=dotnet-httpclient", "spec.clients[0].threads=1"},
			[]string{"connections.maxLifetime"}, []string{"gRPC"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkText(t, simulateSource(t, "grpc.yaml", []byte(grpcPinned), c.sets...), c.want, c.lack)
		})
	}
}

// checkText renders r's text report and checks that, its lines joined, it says
// every phrase of want and none of lack.
func checkText(t *testing.T, r *result.Result, want, lack []string) {
	t.Helper()
	var b strings.Builder
	if err := report.Text(&b, r); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(b.String()), " ")
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q:\n%s", w, b.String())
		}
	}
	for _, w := range lack {
		if strings.Contains(text, w) {
			t.Errorf("text has %q:\n%s", w, b.String())
		}
	}
}
