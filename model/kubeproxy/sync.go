package kubeproxy

import "time"

// syncBurst is how many syncs kube-proxy may run back to back before minSyncPeriod
// spaces them (pkg/proxy/iptables/proxier.go and pkg/proxy/nftables/proxier.go:
// burstSyncs = 2).
const syncBurst = 2

// SyncRunner rate-limits one node's rule syncs as kube-proxy's BoundedFrequencyRunner
// does (pkg/util/async/bounded_frequency_runner.go): a token bucket refilled at one
// token per minSyncPeriod, holding at most syncBurst; a sync that finds no token is
// retried minSyncPeriod after the last one ran. Times are offsets from any origin.
type SyncRunner struct {
	minInterval time.Duration
	tokens      float64
	at          time.Duration // when tokens was last brought up to date
	last        time.Duration // when the last sync ran
}

// NewSyncRunner returns a runner with a full bucket, as after a long quiet spell.
func NewSyncRunner(minSyncPeriod time.Duration) *SyncRunner {
	return &SyncRunner{minInterval: minSyncPeriod, tokens: syncBurst, last: -minSyncPeriod}
}

// TryRun reports whether a sync may run at now, and if so counts it.
func (r *SyncRunner) TryRun(now time.Duration) bool {
	if r.minInterval <= 0 {
		r.last = now
		return true
	}
	r.tokens = min(syncBurst, r.tokens+float64(now-r.at)/float64(r.minInterval))
	r.at = now
	// A retry lands exactly a period after the last run; the bucket has refilled
	// one token by then, give or take the float's last bit.
	if r.tokens < 1-1e-9 {
		return false
	}
	r.tokens = max(0, r.tokens-1)
	r.last = now
	return true
}

// RetryAt is when a sync refused by TryRun runs: minSyncPeriod after the last one.
func (r *SyncRunner) RetryAt() time.Duration { return r.last + r.minInterval }
