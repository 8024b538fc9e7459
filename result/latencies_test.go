package result

import "testing"

// Latencies added up from two halves' buckets sum up as the whole recorded at once:
// the same buckets, the exact extremes of both; the zero value is empty.
func TestLatenciesAddUpFromBuckets(t *testing.T) {
	var whole, a, b, sum Latencies
	if (whole.Latency() != Latency{}) {
		t.Fatalf("an empty Latencies sums up to %+v", whole.Latency())
	}
	for i := int64(1); i <= 2000; i++ {
		ns := i * 7919 % 5_000_000
		whole.Record(ns)
		if i%2 == 0 {
			a.Record(ns)
		} else {
			b.Record(ns)
		}
	}
	sum.AddBuckets(a.Buckets())
	sum.AddBuckets(b.Buckets())
	if got, want := sum.Latency(), whole.Latency(); got != want {
		t.Errorf("added up %+v, want %+v", got, want)
	}
}
