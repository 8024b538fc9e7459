package load

import (
	"strconv"
	"testing"

	"trafficlab/result"
)

// TestMergeErrors: two shards' distinct errors merge in the order first seen, one
// seen by both at its earlier time, and only the first MaxEndedErrors are kept:
// shard a saw errors 0, 2, 4, … at those times, shard b 1, 3, 5, … and also 0,
// later than a.
func TestMergeErrors(t *testing.T) {
	seen := func(at int64, i int) firstError {
		return firstError{at: at, e: result.EndedError{Message: "error " + strconv.Itoa(i)}}
	}
	var a, b []firstError
	for i := 0; i < 2*MaxEndedErrors; i += 2 {
		a = append(a, seen(int64(i), i))
		b = append(b, seen(int64(i+1), i+1))
	}
	b = append([]firstError{seen(5, 0)}, b...)
	for _, tc := range []struct {
		name string
		x, y []firstError
	}{{"a then b", a, b}, {"b then a", b, a}} {
		t.Run(tc.name, func(t *testing.T) {
			got := mergeErrors(tc.x, tc.y)
			if len(got) != MaxEndedErrors {
				t.Fatalf("%d errors, want %d", len(got), MaxEndedErrors)
			}
			for i, f := range got {
				if want := seen(int64(i), i); f != want {
					t.Fatalf("error %d is %+v, want %+v", i, f, want)
				}
			}
		})
	}
}

// TestEndedAddAllocatesNothing: counting an answer, or an error status already
// kept, costs no allocation, as the rest of the hot path (TestOverheadAgainstWrk).
func TestEndedAddAllocatesNothing(t *testing.T) {
	cfg := &Config{Method: "GET", Target: "http://web/", BodyBytes: 10}
	for _, o := range []outcome{
		{kind: kindOK, code: 200, bytesIn: 2, latency: 1e6},
		{kind: kindUnavailable, code: 503, latency: 2e6},
		{kind: kindOther, code: 500, latency: 3e6},
	} {
		x := newEnded()
		x.add(&o, 1, 2, cfg) // the first of a code adds its key, the first error its message
		if n := testing.AllocsPerRun(100, func() { x.add(&o, 1, 2, cfg) }); n != 0 {
			t.Errorf("%s %d: %g allocations a request", o.kind, o.code, n)
		}
	}
}
