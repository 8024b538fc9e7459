package serve

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"trafficlab/scenario"
)

// callingPod is the front pod of a scenario whose front calls a back: calls is the
// front's calls list, back the back's service time.
func callingPod(t *testing.T, calls, back string) (front, backPod *scenario.Pod) {
	t.Helper()
	src := fmt.Sprintf(`apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: calls}
spec:
  duration: 10s
  services:
  - name: front
    replicas: 1
    pod:
      serviceTime: {distribution: constant, value: 1ms}
      calls: %s
  - name: back
    replicas: 1
    pod:
      serviceTime: %s
  clients:
  - {name: load, target: front, threads: 1}
`, calls, back)
	sc, _, diags := scenario.Load("calls.yaml", []byte(src), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return &sc.Spec.Services[0].Pod, &sc.Spec.Services[1].Pod
}

// A pod with calls makes them for every request, as simulate does: answered calls
// answer the request 200; calls that time out after their retries answer it 503,
// unless optional; the pod counts its calls per Service as simulate's edges.
func TestServeMakesItsCalls(t *testing.T) {
	const n = 20
	for _, c := range []struct {
		name, calls, back string
		status            int
		attempts, failed  int64
	}{
		{"answered", "[{service: back}]", "{distribution: constant, value: 1ms}", 200, n, 0},
		{"timed out", "[{service: back, timeout: 20ms, retries: 1}]", "{distribution: constant, value: 200ms}", 503, 2 * n, n},
		{"optional", "[{service: back, timeout: 20ms, optional: true}]", "{distribution: constant, value: 200ms}", 200, n, n},
	} {
		t.Run(c.name, func(t *testing.T) {
			front, back := callingPod(t, c.calls, c.back)
			b := start(t, Config{Pod: back, Name: "back-0", Work: Sleep})
			f := start(t, Config{Pod: front, Name: "front-0", Service: "front", Work: Sleep,
				Calls: map[string]string{"back": "http://" + b.addr + "/"}})
			cl := client(t, false)
			var wg sync.WaitGroup
			status := make([]int, n)
			for i := range n {
				wg.Go(func() {
					resp, _, err := get(cl, f.addr, "/")
					if err != nil {
						t.Error(err)
						return
					}
					status[i] = resp.StatusCode
				})
			}
			wg.Wait()
			for i, s := range status {
				if s != c.status {
					t.Fatalf("request %d answered %d, want %d", i, s, c.status)
				}
			}
			fig := f.Figures()
			if len(fig.Calls) != 1 || fig.Requests != n || fig.Errors != n*int64(c.status/503) {
				t.Fatalf("figures %+v, want %d requests answered, their 503s, and calls to back", fig, n)
			}
			e := fig.Calls[0].Edge
			if e.From != "front" || e.To != "back" || e.Requests != n || e.Attempts != c.attempts || e.Errors.Total() != c.failed ||
				e.Errors.Timeout != c.failed || e.Retries != c.attempts-n {
				t.Errorf("edge %+v: want %d calls, %d attempts, %d failed by timeout", e, n, c.attempts, c.failed)
			}
			if c.failed == 0 && (e.PodsReached != 1 || fig.Calls[0].Answered["back-0"] != n || e.LatencyMS.Min < 1 || e.ConnectionsOpened == 0) {
				t.Errorf("edge %+v: want the back pod reached, calls over 1 ms, connections opened", e)
			}
		})
	}
}

// A pod's calls need the address of each Service they name.
func TestServeNeedsEveryCalleeAddress(t *testing.T) {
	front, _ := callingPod(t, "[{service: back}]", "{distribution: constant, value: 1ms}")
	if _, err := New(Config{Pod: front, Name: "front-0"}); err == nil || !strings.Contains(err.Error(), "--call back=URL") {
		t.Errorf("New without the back's address: %v", err)
	}
}
