package emulate

import (
	"fmt"
	"testing"

	"trafficlab/emulate/emutest"
)

const openLoopClient = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: client-cpu}
spec:
  duration: 3s
  seed: 1
  cluster:
    nodes: [{name: node, count: 1, cpu: "2"}]
  services:
  - name: web
    replicas: 2
    pod: {serviceTime: {distribution: constant, value: 20us}, cpu: 300m}
  clients:
  - name: gen
    target: web
    rate: %s
    library: vegeta
%s`

// Each client pod is a load generator process in a control group of its own: its
// CPU is measured, and limited as clients[].resources says. Limited to 40
// millicores at 3,000 requests a second it cannot keep up, uses its whole quota,
// and sends only what that affords; unlimited at 300 a second it sends every one.
//
// The bounds: the group starts a run with a full 100 ms period's quota, and the
// kernel notices a spent quota at its next tick, on each CPU the generator runs on,
// so the last period may overrun by a tick per CPU before the debt is repaid in
// periods after the run (1/HZ: 4 ms on this machine's kernel, 10 ms at the lowest
// common HZ, 100). Over 3 s at 40m on 2 CPUs: (120 + 4 + 2 × 10) ms of 120, 1.2 of
// the limit. How many requests that affords depends on what each costs, and a
// throttled generator's cost is not cmd/cpucost's steady one: a floor of 25 µs
// (under 65 % sent) held in every earlier CI run, then one sent 69 % at 23 µs. So the
// test wants what the limit makes certain: its quota used, and the generator
// behind its schedule, with arrivals it never sent.
func TestClientPodsSpendTheirOwnCPU(t *testing.T) {
	emutest.NeedRoot(t, "ip", "iptables-restore")
	t.Run("limited", func(t *testing.T) {
		r := emulateDoc(t, "limited.yaml", fmt.Sprintf(openLoopClient, "3000/s", "    resources: {limits: {cpu: 40m}}\n"))
		c := r.Clients[0]
		if len(c.Pods) != 1 {
			t.Fatalf("client pods %+v, want one", c.Pods)
		}
		p := c.Pods[0]
		if p.CPULimit != 0.04 || p.CPUUtilization < 0.8 || p.CPUUtilization > 1.2 {
			t.Errorf("client pod %+v; want a 0.04 limit, 80 to 120 %% of it used", p)
		}
		if c.Due < 8900 || c.Sent == 0 || c.Sent >= c.Due || c.Behind == 0 {
			t.Errorf("sent %d of %d due, %d behind schedule; want about 9,000 due, fewer sent, some never", c.Sent, c.Due, c.Behind)
		}
		if c.MaxLateS <= 0 || c.CPUPerRequestMS <= 0 {
			t.Errorf("max late %gs, %g ms a request; want both measured", c.MaxLateS, c.CPUPerRequestMS)
		}
		if n := r.Nodes[0]; n.ClientCPUCores != c.CPUCores || n.ClientCPUCores <= 0 {
			t.Errorf("node's client CPU %g, the client's %g; want the same", n.ClientCPUCores, c.CPUCores)
		}
	})
	t.Run("unlimited", func(t *testing.T) {
		r := emulateDoc(t, "unlimited.yaml", fmt.Sprintf(openLoopClient, "300/s", ""))
		c := r.Clients[0]
		if c.Behind != 0 || r.Requests.NotSent != 0 || c.Sent < c.Due || c.Due < 890 {
			t.Errorf("sent %d of %d due, %d behind, %d not sent; want all of about 900 sent", c.Sent, c.Due, c.Behind, r.Requests.NotSent)
		}
		if p := c.Pods[0]; p.CPULimit != 0 || p.CPUCores <= 0 || p.CPUUtilization > 0.5 {
			t.Errorf("client pod %+v; want no limit, some CPU, far from the node's 2 cores", p)
		}
	})
}
