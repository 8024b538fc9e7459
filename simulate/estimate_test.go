package simulate

import (
	"testing"

	"trafficlab/examples"
)

// TestOfferedEstimatesEveryExample: the estimate a long run is announced with is
// within a factor of two of the requests every example sends (10 s of each).
func TestOfferedEstimatesEveryExample(t *testing.T) {
	for _, ex := range examples.List() {
		e := buildExample(t, ex.Name, "spec.duration=10s")
		want := Offered(e.sc)
		e.Run(nil)
		got := float64(e.Requests())
		t.Logf("%s: estimated %.0f, sent %.0f", ex.Name, want, got)
		if got > 2*want || got < want/2 {
			t.Errorf("%s: estimated %.0f requests, the run sent %.0f", ex.Name, want, got)
		}
	}
}
