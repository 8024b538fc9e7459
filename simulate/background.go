package simulate

import (
	"fmt"

	"trafficlab/model/disk"
	"trafficlab/placement"
	"trafficlab/scenario"
	"trafficlab/simulate/background"
)

// addBackground places workload bi and hands it, with its node's CPU group and
// disk, to the background subsystem.
func (e *Engine) addBackground(bi int32, b *scenario.Background) error {
	n, err := e.sched.Schedule(placement.BackgroundPod(b))
	if err != nil {
		return fieldError(fmt.Sprintf("spec.background[%d]", bi), placement.Unschedulable(b.Name, err))
	}
	w := background.Workload{Spec: b, Node: int32(n), Writer: -1}
	if b.CPU != nil {
		w.CPU = e.nodes[n].cpu.AddGroup(background.GroupID(bi), cpuWeight(&b.Resources), e.cpuQuota(&b.Resources, "background/"+b.Name))
	}
	if b.DiskWriteBytesPerSecond != nil {
		if e.nodes[n].disk == nil {
			// Its writes never wait, but they are counted.
			e.nodes[n].disk = disk.New(disk.Limits{})
		}
		w.Disk = e.nodes[n].disk
		w.Writer = e.addWriter(int32(n), b.Name, true)
	}
	e.backgrounds.Add(w)
	return nil
}
