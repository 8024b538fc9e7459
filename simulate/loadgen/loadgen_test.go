package loadgen

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trafficlab/scenario"
	"trafficlab/sim"
)

// recorder is a client pod's callers that answer each request at once when
// answer is set, and note when the generator called them.
type recorder struct {
	k      *sim.Kernel
	g      *Generator
	answer bool
	got    []string
}

func (r *recorder) Threads(ci int32, n int) {
	r.got = append(r.got, fmt.Sprintf("%v threads %d", time.Duration(r.k.Now()), n))
	if r.answer {
		for i := 0; i < n; i++ {
			for r.g.MayIssue(ci, int32(i)) {
				r.g.Completed(ci, r.g.Issued(ci))
			}
		}
	}
}

func (r *recorder) Arrive(ci int32) {
	r.got = append(r.got, fmt.Sprintf("%v arrive", time.Duration(r.k.Now())))
}

func (r *recorder) Ended(ci int32) {
	r.got = append(r.got, fmt.Sprintf("%v ended", time.Duration(r.k.Now())))
}

func until(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

// TestPlans runs one client pod through each plan and checks what it asked of its
// callers, and when.
func TestPlans(t *testing.T) {
	cases := []struct {
		name   string
		client scenario.Client
		answer bool
		want   []string
		runs   int
	}{
		{
			name:   "closed loop for the whole run",
			client: scenario.Client{Threads: 3, Repeat: 1},
			want:   []string{"0s threads 3"},
		},
		{
			// The k-th arrival at k/rate exactly; none at the phase's end.
			name: "a closed then an open phase",
			client: scenario.Client{Repeat: 1, Phases: []scenario.Phase{
				{Threads: 2, Duration: until(time.Second)},
				{Rate: &scenario.Rate{PerSecond: 4}, Duration: until(time.Second)},
			}},
			want: []string{"0s threads 2", "1s ended", "1s arrive", "1.25s arrive", "1.5s arrive", "1.75s arrive", "2s ended"},
			runs: 2,
		},
		{
			// ab -n 3: the phase ends when its 3 requests are answered, then pauses
			// 500 ms, twice over.
			name:   "phases by request count, repeated",
			client: scenario.Client{Repeat: 2, Phases: []scenario.Phase{{Threads: 1, Requests: 3, Pause: until(500 * time.Millisecond)}}},
			answer: true,
			want:   []string{"0s threads 1", "0s ended", "500ms threads 1", "500ms ended"},
			runs:   2,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := sim.New()
			r := &recorder{k: k, answer: c.answer}
			g := New(k, r)
			r.g = g
			g.AddPlan(&c.client, 10*time.Second)
			g.AddPod(0, rand.New(rand.NewPCG(1, 2)))
			g.Start(0)
			k.Run(sim.Duration(10 * time.Second))
			if !slices.Equal(r.got, c.want) {
				t.Errorf("got %q, want %q", r.got, c.want)
			}
			runs := g.Runs(0, sim.Duration(10*time.Second))
			if len(runs) != c.runs {
				t.Fatalf("%d runs, want %d", len(runs), c.runs)
			}
			if c.answer {
				for i, run := range runs {
					if run.Requests != 3 {
						t.Errorf("run %d answered %d requests, want 3", i, run.Requests)
					}
				}
			}
		})
	}
}

// TestMayIssue: a closed-loop thread beyond the phase's count may not send, nor
// may any once the phase has issued its requests or has ended.
func TestMayIssue(t *testing.T) {
	k := sim.New()
	g := New(k, &recorder{k: k})
	g.AddPlan(&scenario.Client{Repeat: 1, Phases: []scenario.Phase{{Threads: 2, Requests: 2}}}, time.Minute)
	g.AddPod(0, rand.New(rand.NewPCG(1, 2)))
	g.Start(0)
	if !g.MayIssue(0, 1) || g.MayIssue(0, 2) {
		t.Errorf("threads 0-1 may issue, thread 2 not: got %v, %v", g.MayIssue(0, 1), g.MayIssue(0, 2))
	}
	e1, e2 := g.Issued(0), g.Issued(0)
	if g.MayIssue(0, 0) {
		t.Error("a phase of 2 requests issued a third")
	}
	g.Completed(0, e1)
	g.Completed(0, e2)
	if g.Active(0) || g.Current(0, e1) {
		t.Error("the phase did not end with its 2 requests answered")
	}
}
