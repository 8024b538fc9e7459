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

// A background workload runs for real on the node the simulation places it: a
// writer of 2 MiB/s in 512 KiB chunks writes one every 250 ms, 12 in 3 s, to its
// node's volume; a burner of half a core uses about that in its control group.
func TestBackgroundWorkloadsRunForReal(t *testing.T) {
	emutest.NeedRoot(t, "ip", "iptables-restore", "losetup", "mkfs.ext4", "mount")
	r := emulateDoc(t, "background.yaml", `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: background}
spec:
  duration: 3s
  seed: 1
  cluster:
    nodes: [{name: pool, count: 2}]
  services:
  - name: api
    replicas: 2
    pod: {serviceTime: {distribution: constant, value: 300us}}
  clients:
  - {name: users, target: api, rate: 100/s}
  background:
  - {name: writer, node: pool-1, diskWriteBytesPerSecond: 2Mi, diskWriteChunkBytes: 524288}
  - {name: burner, node: pool-0, cpu: 500m}
`)
	if len(r.Background) != 2 {
		t.Fatalf("background %+v: want the writer and the burner", r.Background)
	}
	for _, b := range r.Background {
		switch b.Name {
		case "writer":
			if b.Node != "pool-1" || b.DiskWrittenBytes != 12*524288 || b.CPUCores != 0 {
				t.Errorf("writer %+v: want 12 chunks of 512 KiB on pool-1", b)
			}
		case "burner":
			// Its duty cycle is on the wall clock: it does not make up what other
			// processes take, so not above half a core, and not far below on a
			// machine with a core to spare.
			if b.Node != "pool-0" || b.CPUCores < 0.3 || b.CPUCores > 0.6 || b.DiskWrittenBytes != 0 {
				t.Errorf("burner %+v: want about 0.5 cores on pool-0", b)
			}
		}
	}
}
