package cluster

import (
	"strings"
	"testing"

	"trafficlab/examples"
	"trafficlab/scenario"
)

// A client whose library the scenario gives CPU of its own is said to run on
// trafficlab's load generator instead, with that CPU; one given none is not.
func TestLoadGenerators(t *testing.T) {
	data, err := examples.Get("r1-curl-loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		sets []string
		want string
	}{
		{"curl's process start", nil, "client caller: its pods run trafficlab's own load generator, which pools and connects as curl-loop does but does not spend the scenario's CPU for it (5ms a request before it is sent)"},
		{"every cost", []string{"spec.clients[0].work={perRequest: 30us, perConnection: 50us, steady: 20m}"}, "(30µs a request before it is sent, 50µs a connection, 20m cores throughout)"},
		{"no cost", []string{"spec.clients[0].work={perRequest: 0s}"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, _, diags := scenario.Load("r1-curl-loop.yaml", data, tc.sets)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			got := strings.Join(loadGenerators(sc), "\n")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("said %q, want %q", got, tc.want)
			}
		})
	}
}
