package background

import (
	"math"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trafficlab/model/disk"
	"trafficlab/model/node"
	"trafficlab/scenario"
	"trafficlab/sim"
)

func dur(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }

// TestWorkloadsBurnAndWrite runs a burner and a writer in bursts of 2 s every
// 10 s for 60 s: the burner uses its cores for 12 s, and the writer writes its
// rate for those 12 s, on a disk that never makes it wait.
func TestWorkloadsBurnAndWrite(t *testing.T) {
	k := sim.New()
	end := sim.Duration(60 * time.Second)
	ws := New(k, end)
	cpu := node.NewCPU(4)
	cpu.Changed = func(g *node.Group) {
		if at, ok := g.Next(); ok && !ws.CPUChanged(g, at) {
			t.Fatalf("group %d is not a workload's", g.ID)
		}
	}
	chunk, io := int64(64<<10), int64(64<<10)
	two, rate := resource.MustParse("2"), resource.MustParse("1Mi")
	spec := &scenario.Background{Name: "batch", CPU: &two, DiskWriteBytesPerSecond: &rate,
		DiskWriteChunkBytes: &chunk, DiskIOBytes: &io,
		Schedule: &scenario.Schedule{Bursts: &scenario.Bursts{Every: dur(10 * time.Second), Length: dur(2 * time.Second)}}}
	d := disk.New(disk.Limits{})
	ws.Add(Workload{Spec: spec, Node: 0, CPU: cpu.AddGroup(GroupID(0), 1024, node.Quota{}), Disk: d, Writer: 0})
	k.Run(end)
	got := ws.Result(end, func(int32) string { return "node-0" })
	if len(got) != 1 {
		t.Fatalf("%d results, want 1", len(got))
	}
	// 2 cores for 12 of 60 s.
	if want := 2 * 12.0 / 60; math.Abs(got[0].CPUCores-want) > 1e-4 {
		t.Errorf("cpu cores = %v, want %v", got[0].CPUCores, want)
	}
	// 1 MiB/s for 12 s, in whole chunks: each burst's writes start at 0 and every
	// 1/16 s, 32 of them in a 2 s burst.
	if want := int64(6 * 32 * chunk); got[0].DiskWrittenBytes != want {
		t.Errorf("written = %d, want %d", got[0].DiskWrittenBytes, want)
	}
}
