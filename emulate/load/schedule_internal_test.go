package load

import (
	"testing"
	"time"

	"trafficlab/scenario"
	"trafficlab/sim"
)

// TestDueBefore: a generator that ends its phase with arrivals due and unsent
// counts the one it holds and each after it due before the end, and none that
// were not yet due. 10/s for 1 s: arrivals at 0, 0.1, … 0.9 s.
func TestDueBefore(t *testing.T) {
	begun := time.Unix(1000, 0)
	for _, c := range []struct {
		name  string
		given int           // arrivals taken from the schedule, the last one unsent
		end   time.Duration // since the phase began
		want  int64
	}{
		{"caught up: the held arrival is after the end", 7, 550 * time.Millisecond, 0},
		{"the held arrival and three more", 3, 550 * time.Millisecond, 4},
		{"the end is the phase's: every one left", 1, 2 * time.Second, 10},
		{"one due exactly at the end is not counted", 5, 500 * time.Millisecond, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSchedule(Phase{Rate: 10, Duration: time.Second}, scenario.ArrivalConstant, sim.Stream(1, "t"))
			for range c.given {
				if _, ok := s.next(); !ok {
					t.Fatal("schedule ended early")
				}
			}
			if got := s.dueBefore(begun, begun.Add(c.end)); got != c.want {
				t.Errorf("dueBefore = %d, want %d", got, c.want)
			}
		})
	}
}

// A schedule of N requests ends after N, whatever its rate.
func TestScheduleStopsAtItsRequests(t *testing.T) {
	s := newSchedule(Phase{Rate: 1000, Requests: 3}, scenario.ArrivalPoisson, sim.Stream(1, "t"))
	n := 0
	for _, ok := s.next(); ok; _, ok = s.next() {
		n++
	}
	if n != 3 {
		t.Errorf("%d arrivals, want 3", n)
	}
}
