package emulate

import (
	"fmt"
	"testing"
	"time"

	"trafficlab/emulate/emutest"
	"trafficlab/result"
)

// R5 at a scale this machine runs: an open loop through a client sidecar whose
// workers each spend 5.5 ms a request, 1.1 cores of work at 200 requests a second
// (with the rest, under the 1.2 cores over which emulate warns that a run measures
// this machine). Service pods have inbound sidecars too.
const sidecarR5 = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: sidecar}
spec:
  duration: 5s
  seed: 1
  cluster:
    nodes: [{name: node, count: 1, cpu: "2"}]
  services:
  - name: add
    replicas: 2
    pod: {serviceTime: {distribution: constant, value: 20us}, cpu: 300m}
    sidecar: {perRequestCPU: 100us}
  clients:
  - name: vegeta
    target: add
    rate: 200/s
    timeout: 100ms
    library: vegeta
    sidecar: {concurrency: %d, perRequestCPU: 5500us}
`

// R5's shape for real, with nginx in Envoy's place: one worker cannot carry 1.1
// cores of work, so its queue grows past the client's timeout and most requests
// time out while it stays busy; two workers carry it, and hardly any request times
// out. Once the queue holds more than the timeout, every request waits longer than
// 100 ms in it, for its first half or its answer: what gets through is the first
// second or so (the queue grows by 0.1 s a second) and what the queue's swings let
// by. Both sidecars' figures come from the run: requests
// counted by nginx, CPU from their control groups.
func TestSidecarWorkersForReal(t *testing.T) {
	emutest.NeedRoot(t, "ip", "iptables-restore")
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d workers", workers), func(t *testing.T) {
			r := emulateDoc(t, "sidecar.yaml", fmt.Sprintf(sidecarR5, workers))
			var out *result.Sidecar
			inbound := 0
			for i, s := range r.Sidecars {
				switch s.Direction {
				case result.SidecarOutbound:
					out = &r.Sidecars[i]
				case result.SidecarInbound:
					inbound++
					if s.Requests == 0 || s.Workers != 2 {
						t.Errorf("inbound sidecar %+v: want requests, 2 workers (Istio's from its default 2-core limit)", s)
					}
				}
			}
			if out == nil || inbound != 2 {
				t.Fatalf("sidecars %+v: want one outbound, two inbound", r.Sidecars)
			}
			if out.Workers != workers || out.Requests < r.Requests.Total*9/10 {
				t.Errorf("outbound sidecar %+v: want %d workers and nearly every request sent", *out, workers)
			}
			timedOut := float64(r.Errors.Timeout) / float64(r.Requests.Total)
			t.Logf("%d workers: %+v; requests %+v; %.1f%% timed out", workers, *out, r.Requests, 100*timedOut)
			switch workers {
			case 1:
				if timedOut < 0.6 || out.WorkerUtilization < 0.9 {
					t.Errorf("one worker: %.0f%% timed out, worker busy %.0f%%; want most timed out, the worker busy", 100*timedOut, 100*out.WorkerUtilization)
				}
			case 2:
				// 55% of each worker's time is work; what the machine adds is noise.
				if timedOut > 0.05 || out.WorkerUtilization < 0.45 || out.WorkerUtilization > 0.7 {
					t.Errorf("two workers: %.1f%% timed out, workers busy %.0f%%; want hardly any, about 55%%", 100*timedOut, 100*out.WorkerUtilization)
				}
				// The 5.5 ms asked, and nginx's own proxying on top: under 0.2 ms, as
				// the docs say (70–80 µs here).
				perRequest := time.Duration(out.CPUCores * r.DurationS / float64(out.Requests) * 1e9)
				t.Logf("the outbound sidecar's CPU a request: %v", perRequest)
				if perRequest < 5500*time.Microsecond || perRequest > 5700*time.Microsecond {
					t.Errorf("the outbound sidecar spent %v a request; want 5.5 ms and nginx's own under 0.2 ms", perRequest)
				}
			}
			reached := 0
			for _, p := range r.Pods {
				if p.Requests > 0 {
					reached++
				}
			}
			if reached != 2 {
				t.Errorf("pods %+v: want both reached, the sidecar picking per request", r.Pods)
			}
		})
	}
}
