package load

import (
	"math"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The timeline keeps an interval's histogram only until every load has passed
// it, and its percentiles are those of all loads' latencies together.
func TestTimelineMergesLoads(t *testing.T) {
	tl := NewTimeline(2)
	a, b := tl.Adder(0), tl.Adder(1)
	h := func(ms ...int64) *hdr.Histogram {
		out := hdr.New(1, 3600e9, 2)
		for _, v := range ms {
			out.RecordValue(v * 1e6)
		}
		return out
	}
	a(0, h(1, 1, 1))
	if len(tl.pct) != 0 || len(tl.open) != 1 {
		t.Fatalf("interval 0 settled before load 1 passed it: %v", tl.pct)
	}
	b(0, h(100))
	a(1, h(2))
	// 2 significant digits: within 1 %.
	near := func(got, want float64) bool { return math.Abs(got-want) <= want/100 }
	if p := tl.Percentiles(0); !near(p[0], 1) || !near(p[3], 100) {
		t.Errorf("interval 0: p50 %g, p99.9 %g; want 1 and 100 (three at 1 ms, one at 100 ms)", p[0], p[3])
	}
	tl.Ended(1) // load 1 ends early: interval 1 is final as soon as load 0 is past it
	if p := tl.Percentiles(1); !near(p[0], 2) || len(tl.open) != 0 || len(tl.pct) != 2 {
		t.Errorf("interval 1: %v, %d open, %d settled; want p50 2, none open, 2 settled", p, len(tl.open), len(tl.pct))
	}
}
