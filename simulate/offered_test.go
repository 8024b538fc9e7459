package simulate

import "testing"

// overworkersYAML is 4 pods of 2 workers, each request holding one for 10 ms on
// average, offered 1,000/s by vegeta: 800/s served at most, 10 s.
const overworkersYAML = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: overworkers}
spec:
  duration: 10s
  seed: 1
  cluster:
    nodes: [{name: n, count: 2, cpu: "8"}]
  services:
  - name: web
    replicas: 4
    pod:
      concurrency: 2
      serviceTime: {distribution: constant, value: 100us}
      waitTime: {distribution: exponential, mean: 10ms}
  clients:
  - name: load
    target: web
    rate: 1000/s
    library: vegeta
    timeout: 2s
`

// The timeline's Offered is the load the clients put on, interval by interval,
// whatever finished: an overloaded service finishes fewer requests than it is sent,
// and the report judges the tail by load from this.
func TestTimelineOfferedIsTheLoad(t *testing.T) {
	r := runYAML(t, overworkersYAML)
	var offered, finished int64
	for _, pt := range r.Timeline {
		// vegeta's constant pacer sends exactly 1,000 requests in each second.
		if pt.Offered != 1000 {
			t.Errorf("at %v s: offered %d, want 1000", pt.TS, pt.Offered)
		}
		offered += pt.Offered
		finished += pt.Requests
	}
	// 8 workers at 10 ms serve 800/s of the 1,000/s: the rest time out or are still
	// waiting, so fewer requests finish than were offered.
	if finished >= offered {
		t.Errorf("finished %d of %d offered; an overloaded run finishes fewer", finished, offered)
	}
	q := r.Requests
	if want := q.Total + q.InFlight + q.NotSent + q.Abandoned; offered != want {
		t.Errorf("offered %d over the timeline, want %d: total %d + in flight %d + not sent %d + abandoned %d",
			offered, want, q.Total, q.InFlight, q.NotSent, q.Abandoned)
	}
}
