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

func TestIntensityAndNextChange(t *testing.T) {
	one := 1.0
	bursts := &scenario.Schedule{Bursts: &scenario.Bursts{Every: dur(10 * time.Second), Length: dur(2 * time.Second), Start: dur(5 * time.Second)}}
	diurnal := &scenario.Schedule{Diurnal: &scenario.DiurnalFactor{Min: 0.2, Max: &one, Period: dur(24 * time.Hour)}}
	step := sim.Duration(24*time.Hour) / scenario.DiurnalSteps
	cases := []struct {
		name      string
		s         *scenario.Schedule
		at        time.Duration
		want      float64
		wantNext  time.Duration
		checkNext bool
	}{
		{"no schedule is full intensity", nil, 3 * time.Second, 1, 0, false},
		{"before the first burst", bursts, 4 * time.Second, 0, 5 * time.Second, true},
		{"in a burst", bursts, 6 * time.Second, 1, 7 * time.Second, true},
		{"between bursts", bursts, 8 * time.Second, 0, 15 * time.Second, true},
		{"at a burst's end", bursts, 17 * time.Second, 0, 25 * time.Second, true},
		{"diurnal peak", diurnal, 0, 1, time.Duration(step), true},
		{"diurnal trough", diurnal, 12 * time.Hour, 0.2, 12*time.Hour + time.Duration(step), true},
		// Halfway between: the cosine is at 0, so the middle of min and max.
		{"diurnal quarter", diurnal, 6 * time.Hour, 0.6, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			at := sim.Duration(c.at)
			if got := intensity(c.s, at); math.Abs(got-c.want) > 1e-12 {
				t.Errorf("intensity = %v, want %v", got, c.want)
			}
			if c.checkNext {
				if got := nextChange(c.s, at); got != sim.Duration(c.wantNext) {
					t.Errorf("nextChange = %v, want %v", time.Duration(got), c.wantNext)
				}
			}
		})
	}
}

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
