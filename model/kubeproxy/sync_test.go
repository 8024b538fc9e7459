package kubeproxy

import (
	"testing"
	"time"
)

// Requests for a sync and when each runs, with minSyncPeriod 1 s: two run at once
// (burst 2), then they are spaced a second apart, and a quiet spell refills the bucket.
func TestSyncRunner(t *testing.T) {
	s := time.Second
	cases := []struct {
		name string
		asks []time.Duration // each asked when the previous has run
		runs []time.Duration
	}{
		{"one change syncs at once", []time.Duration{5 * s}, []time.Duration{5 * s}},
		{"burst of two, then a second apart", []time.Duration{0, 0, 0, 0}, []time.Duration{0, 0, s, 2 * s}},
		{"half a bucket refilled", []time.Duration{0, 0, 1500 * time.Millisecond, 1600 * time.Millisecond},
			[]time.Duration{0, 0, 1500 * time.Millisecond, 2500 * time.Millisecond}},
		{"quiet spell refills both tokens", []time.Duration{0, 0, 10 * s, 10 * s, 10 * s},
			[]time.Duration{0, 0, 10 * s, 10 * s, 11 * s}},
	}
	for _, c := range cases {
		r := NewSyncRunner(s)
		now := time.Duration(0)
		for i, ask := range c.asks {
			now = max(now, ask)
			if !r.TryRun(now) {
				now = r.RetryAt()
				if !r.TryRun(now) {
					t.Fatalf("%s: sync %d refused again at its retry time %v", c.name, i, now)
				}
			}
			if now != c.runs[i] {
				t.Errorf("%s: sync %d ran at %v, want %v", c.name, i, now, c.runs[i])
			}
		}
	}
}

func TestSyncRunnerWithoutMinimum(t *testing.T) {
	r := NewSyncRunner(0)
	for i := 0; i < 5; i++ {
		if !r.TryRun(0) {
			t.Fatal("minSyncPeriod 0 refused a sync")
		}
	}
}
