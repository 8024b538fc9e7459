package faults

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trafficlab/scenario"
	"trafficlab/sim"
)

func dur(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }

func until(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

// recorder notes what the faults did, and when.
type recorder struct {
	k   *sim.Kernel
	got []string
}

func (r *recorder) KillPods(t *scenario.Selector) {
	r.got = append(r.got, time.Duration(r.k.Now()).String()+" kill "+t.Service)
}

func (r *recorder) Reconfigure() {
	r.got = append(r.got, time.Duration(r.k.Now()).String()+" reconfigure")
}

// TestFaultsStartAndEnd runs a loss from 5 s to 10 s, a kill at 20 s and a delay
// that outlasts the 30 s run: each network fault reconfigures the paths when it
// starts and when it ends within the run, a kill fires once, and a fault that
// starts after the run is neither run nor reported.
func TestFaultsStartAndEnd(t *testing.T) {
	specs := []scenario.Fault{
		{Name: "flaky", Kind: scenario.FaultLoss, Start: dur(5 * time.Second), End: until(10 * time.Second)},
		{Name: "kill", Kind: scenario.FaultPodKill, Start: dur(20 * time.Second), Target: scenario.Selector{Service: "web"}},
		{Name: "slow", Kind: scenario.FaultDelay, Start: dur(25 * time.Second), End: until(time.Minute)},
		{Name: "late", Kind: scenario.FaultLoss, Start: dur(40 * time.Second), End: until(time.Minute)},
	}
	k := sim.New()
	r := &recorder{k: k}
	end := sim.Duration(30 * time.Second)
	New(k, r).Start(specs, end)
	k.Run(end)
	want := []string{"5s reconfigure", "10s reconfigure", "20s kill web", "25s reconfigure"}
	if !slices.Equal(r.got, want) {
		t.Errorf("got %q, want %q", r.got, want)
	}
	var names []string
	for _, f := range Result(specs, end) {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, []string{"flaky", "kill", "slow"}) {
		t.Errorf("reported %q", names)
	}
	if got := Result(specs, end)[2].EndS; got != 30 {
		t.Errorf("slow ends at %v s in the report, want the run's end, 30", got)
	}
	for _, c := range []struct {
		f    int
		at   time.Duration
		want bool
	}{
		{0, 4 * time.Second, false}, {0, 5 * time.Second, true}, {0, 10 * time.Second, false},
		{1, 20 * time.Second, false}, // a kill is not a network fault
		{2, 59 * time.Second, true},
	} {
		if got := ActiveOnNetwork(&specs[c.f], sim.Duration(c.at)); got != c.want {
			t.Errorf("%s active at %v = %v, want %v", specs[c.f].Name, c.at, got, c.want)
		}
	}
}
