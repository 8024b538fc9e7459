package serve

import (
	"sync"
	"sync/atomic"
	"time"
	"trafficlab/emulate/cpuclock"
)

// A scenario's serviceTime is a request's whole CPU work on an idle core (scenario
// Pod.ServiceTime), and for a real app that includes its HTTP stack: simulate charges
// all of it to the request (simulate/server.go start). serve's own stack (net/http
// parsing and writing, the Go runtime, the system calls) costs this machine 0.1 to
// 0.2 ms of CPU a request on top of the burn: under a 200m CPU limit that cut an
// emulated pod's throughput by a third against simulate's. So serve measures that
// cost as it runs and burns only the rest of each request's CPU work.
//
// The measurement is the whole process's CPU, so it is only right when the server is
// the process's only work, as in `trafficlab serve` (Config.SubtractOverhead).
type overhead struct {
	estimate atomic.Int64 // process CPU a request spends outside its burn, in ns
	burnt    atomic.Int64 // CPU burnt by requests so far, in ns
	served   atomic.Int64 // requests whose work was cut so far

	mu     sync.Mutex
	credit time.Duration // overhead already spent and not yet taken off a burn
}

const (
	// overheadPeriod is how often the estimate is renewed.
	overheadPeriod = 250 * time.Millisecond
	// overheadSample is the fewest requests a renewal averages over: below it, a
	// period's runtime housekeeping (GC, timers) would weigh on too few requests, so
	// the period is merged into the next one.
	overheadSample = 50
	// creditRequests caps the credit at this many requests' overhead, for service
	// times shorter than the overhead: their burns are all cut to nothing, and a
	// credit grown without bound would later cut a long burn that it should not.
	creditRequests = 16
)

// take cuts d, a request's CPU work, by the overhead the request spends beside it.
// The overhead accrues as credit and is taken off whole burns, so short draws (an
// exponential service time's many small ones) do not lose it: over many requests
// the CPU burnt falls by exactly the overhead.
func (o *overhead) take(d time.Duration) time.Duration {
	o.served.Add(1)
	e := time.Duration(o.estimate.Load())
	o.mu.Lock()
	defer o.mu.Unlock()
	o.credit = min(o.credit+e, creditRequests*e)
	cut := min(o.credit, d)
	o.credit -= cut
	return d - cut
}

// measure renews the estimate every overheadPeriod until stop closes: the process
// CPU that was not burnt, per request served.
func (o *overhead) measure(stop <-chan struct{}) {
	t := time.NewTicker(overheadPeriod)
	defer t.Stop()
	cpu0, burnt0, served0 := cpuclock.Process(), o.burnt.Load(), o.served.Load()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		cpu, burnt, served := cpuclock.Process(), o.burnt.Load(), o.served.Load()
		n := served - served0
		if n < overheadSample {
			continue
		}
		spent := int64(cpu-cpu0) - (burnt - burnt0)
		o.estimate.Store(max(0, spent/n))
		cpu0, burnt0, served0 = cpu, burnt, served
	}
}
