package emulate

import (
	"testing"

	"trafficlab/emulate/emutest"
)

// A pool whose disk has limits gets a volume per node, and its pods' access logs
// go there through the runtime's log writer; a pool without limits gets none, and
// its pods' logs go nowhere, as simulate leaves them. The volumes go with the run.
func TestAccessLogsGoToTheNodesDisk(t *testing.T) {
	emutest.NeedRoot(t, "ip", "iptables-restore", "losetup", "mkfs.ext4", "mount")
	r := emulateDoc(t, "disk.yaml", `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: disk}
spec:
  duration: 3s
  seed: 1
  cluster:
    nodes:
    - {name: slow, count: 1, disk: {writeBytesPerSecond: 1Mi, iops: 50}}
    - {name: plain, count: 1}
  services:
  - name: api
    replicas: 4
    pod:
      serviceTime: {distribution: constant, value: 300us}
      accessLog: {bytes: 250}
  clients:
  - name: users
    target: api
    rate: 200/s
    connections: {reuse: none}
`)
	if r.Requests.OK < 500 || r.Requests.Failed != 0 {
		t.Fatalf("requests %+v: want hundreds answered, none failed", r.Requests)
	}
	for _, n := range r.Nodes {
		onDisk := n.DiskMaxWaitMS > 0
		if onDisk != (n.Name == "slow-0") || n.DiskUtilization < 0 || n.DiskUtilization > 1 {
			t.Errorf("node %s: longest log write %gms, disk %g busy; want log writes on slow-0 only", n.Name, n.DiskMaxWaitMS, n.DiskUtilization)
		}
	}
}
