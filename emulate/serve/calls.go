package serve

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"trafficlab/emulate/load"
	"trafficlab/model/dist"
	"trafficlab/result"
	"trafficlab/scenario"
)

// Calls: a pod whose spec has calls makes them after its work and wait, as
// simulate does (simulate/calls.go): the steps in order, a parallel step's calls at
// once, each call drawn with its probability, made count times, each attempt
// within its timeout and tried again on failure while it has retries; a call that
// still fails, unless optional, makes the pod answer 503. The request holds its
// worker meanwhile. afterCalls is CPU work after them.

// callee is one Service the pod calls: its client and what its calls did.
type callee struct {
	caller *load.Caller
	stats  edgeStats
}

// edgeStats counts one callee's calls as simulate's edges do.
type edgeStats struct {
	mu                          sync.Mutex
	requests, attempts, retries int64
	errors, attemptErrors       result.Errors
	latency                     *latencies
	answered                    map[string]int64 // attempts each pod answered
}

// setupCalls makes the pod's callers, one per Service it calls, at the addresses
// Config.Calls gives.
func (s *Server) setupCalls() error {
	p := s.pod
	if len(p.Calls) == 0 {
		return nil
	}
	if p.Client.PropagateDeadline {
		return fmt.Errorf("serve: client.propagateDeadline is not emulated yet")
	}
	if p.AfterCalls != nil {
		after, err := dist.New(p.AfterCalls.Spec())
		if err != nil {
			return fmt.Errorf("serve: afterCalls: %w", err)
		}
		s.after = &after
	}
	maxBody := map[string]int64{}
	for _, step := range p.Calls {
		for _, c := range step.Calls() {
			maxBody[c.Service] = max(maxBody[c.Service], *c.RequestBytes)
		}
	}
	s.callees = map[string]*callee{}
	for svc, body := range maxBody {
		url, ok := s.cfg.Calls[svc]
		if !ok {
			return fmt.Errorf("serve: the pod calls service %s, but no address is given for it (--call %s=URL)", svc, svc)
		}
		c, err := load.NewCaller(p.Client, url, s.cfg.DNS, body, nil)
		if err != nil {
			return fmt.Errorf("serve: calls to %s: %w", svc, err)
		}
		s.callees[svc] = &callee{caller: c, stats: edgeStats{latency: newLatencies(), answered: map[string]int64{}}}
	}
	return nil
}

// makeCalls makes the pod's steps of calls for one request. It reports whether a
// call that is not optional failed; alive is false when the process exited
// meanwhile.
func (s *Server) makeCalls(ctx context.Context) (failed, alive bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.stop: // the process exited: its calls' connections close with it
			cancel()
		case <-ctx.Done():
		}
	}()
	for i := range s.pod.Calls {
		calls := s.drawn(&s.pod.Calls[i])
		ok := make([]bool, len(calls))
		var wg sync.WaitGroup
		for k, c := range calls {
			wg.Go(func() { ok[k] = s.call(ctx, c) })
		}
		wg.Wait()
		select {
		case <-s.stop:
			return false, false
		default:
		}
		for k, c := range calls {
			failed = failed || (!ok[k] && !c.Optional)
		}
		if failed {
			return true, true
		}
	}
	return false, true
}

// drawn are the calls of step this request makes, each drawn with its probability
// from the pod's stream.
func (s *Server) drawn(step *scenario.Call) []*scenario.Call {
	var out []*scenario.Call
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	for _, c := range step.Calls() {
		if *c.Probability >= 1 || s.rng.Float64() < *c.Probability {
			out = append(out, c)
		}
	}
	return out
}

// call makes one call of the pod's steps, count times, each with its retries; false
// when one still failed after them (an optional call's failure ends only itself).
func (s *Server) call(ctx context.Context, c *scenario.Call) bool {
	e := s.callees[c.Service]
	ok := true
	for range *c.Count {
		start := time.Now()
		var failed bool
		var kind result.ErrorKind
		for try := 0; try <= c.Retries && ctx.Err() == nil; try++ {
			var pod string
			pod, failed, kind = e.caller.Call(ctx, c.Timeout.Duration, *c.RequestBytes)
			if ctx.Err() != nil {
				// The process exited under the call: in flight at its end, neither
				// answered nor failed.
				e.stats.attempt(try > 0, false, 0, "")
				return false
			}
			e.stats.attempt(try > 0, failed, kind, pod)
			if !failed {
				break
			}
		}
		e.stats.ended(failed, kind, time.Since(start))
		if failed {
			ok = false
			if !c.Optional {
				return false
			}
		}
	}
	return ok
}

func (st *edgeStats) attempt(retry, failed bool, kind result.ErrorKind, pod string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.attempts++
	if retry {
		st.retries++
	}
	if failed {
		st.attemptErrors.Add(kind, 1)
	}
	if pod != "" {
		st.answered[pod]++
	}
}

func (st *edgeStats) ended(failed bool, kind result.ErrorKind, took time.Duration) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.requests++
	if failed {
		st.errors.Add(kind, 1)
		return
	}
	st.latency.record(took)
}

// figures are callee svc's calls so far, from service from.
func (e *callee) figures(from, svc string) CallFigures {
	st := &e.stats
	st.mu.Lock()
	f := CallFigures{
		Edge: result.Edge{From: from, To: svc, Requests: st.requests, Attempts: st.attempts, Retries: st.retries,
			Errors: st.errors, AttemptErrors: st.attemptErrors, PodsReached: len(st.answered)},
		Answered: maps.Clone(st.answered),
	}
	st.mu.Unlock()
	f.Latency, f.Edge.LatencyMS = st.latency.bars(), st.latency.latency()
	f.Edge.ConnectionsOpened, f.Edge.PeakOpen = e.caller.Opened()
	return f
}

// sortedNames are the callees' names in order.
func sortedNames(m map[string]*callee) []string { return slices.Sorted(maps.Keys(m)) }
