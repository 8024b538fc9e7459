package scenario

// Limits on the sizes a scenario may ask for, so that whatever validates runs in
// bounded memory and sets up in bounded time. Each is chosen from what simulate's
// engine holds, measured on amd64 (heap after GC, engine built and run 10 ms):
//
//   - a pod, with its endpoints and placement, about 1.9 kB: 10,000 pods took
//     18.6 MB. Placing them grows faster than their number (the scheduler scores
//     every node for each pod and counts the pods already placed): 10,000 pods took
//     0.26 s, 20,000 on 10 nodes 3.4 s, 10,000 on 5,000 nodes 15 s.
//   - a node about 0.8 kB: 5,000 nodes took 4.1 MB.
//   - a request outstanding, with its caller, connection and events, about 450 B:
//     100,000 closed-loop threads took 49 MB (66 MB with a pool per thread), and an
//     open loop of 1,000,000/s against one overloaded pod held 445 MB after 1 s, the
//     million requests it had sent all still waiting.
//
// So maxPods × 1.9 kB ≈ 19 MB, maxNodes × 0.8 kB ≈ 4 MB and maxThreads × 450 B ≈
// 450 MB (660 MB with a pool per thread): each class stays under a gigabyte. What
// only the run tells, the requests pods hold and open loops keep outstanding, the
// engine bounds as it runs (simulate's maxLiveRequests).

import (
	"fmt"
	"math"
	"time"
)

const (
	// maxPods bounds the pods a run creates: services' replicas (or their
	// autoscalers' maxReplicas, whichever is larger) once per rollout and once more,
	// client replicas and background workloads.
	maxPods = 10_000
	// maxNodes is Kubernetes' own limit of a cluster's size
	// (kubernetes.io/docs/setup/best-practices/cluster-large: at most 5,000 nodes).
	maxNodes = 5_000
	// maxThreads bounds the closed-loop threads of a run, each with a request
	// outstanding at a time.
	maxThreads = 1_000_000
	// maxRate bounds an open loop's rate per client pod: simulated time counts
	// nanoseconds, and a faster rate would put several arrivals in one.
	maxRate = 1e9
	// maxDuration bounds every duration, and maxSeconds every count of seconds:
	// simulated time is nanoseconds in an int64 (292 years), and the engine adds
	// durations to times (a deadline is now plus a timeout), so a year keeps every
	// sum far from overflowing. A run of a year is also about as long as anyone waits:
	// see the wall-time estimate simulate prints.
	maxDuration = 365 * 24 * time.Hour
	maxSeconds  = int64(maxDuration / time.Second)
	// maxBytes bounds a size in bytes: HTTP/2's largest window (RFC 9113 section
	// 6.9.1). Sizes cost the simulator no memory, but segments and events in
	// proportion, and a sum of several larger ones could overflow.
	maxBytes = math.MaxInt32
	// maxRuns bounds a client's phases times its repeat: the engine keeps figures
	// for each run of the phase list (about 40 B each).
	maxRuns = 100_000
	// maxSamples bounds spec.report.samples: each kept request takes about 64 B
	// while running and in the Result.
	maxSamples = 1_000_000
	// maxSidecarConcurrency bounds an Envoy's worker threads (--concurrency), each
	// with its own queue and balancer: no node has more cores. maxSidecarWorkers
	// bounds them over every sidecar of the run: about 120 B each (1,000 sidecars of
	// 1,000 workers took 117 MB more than of 1 worker).
	maxSidecarConcurrency = 1024
	maxSidecarWorkers     = 1_000_000
	// maxCurveSegments bounds the straight segments that trace a diurnal rate curve
	// over the run, DiurnalSteps a period, which the engine holds (48 B each, and 16
	// B more while it builds them: 64 MB): a year of daily periods is 525,600.
	maxCurveSegments = 1_000_000
	// maxPeriodicEvents bounds the events of a periodic setting over the run (an HPA
	// sync, a metrics scrape, a burst's edges, a background workload's diurnal steps
	// or disk writes), which cost wall time but are no request, so the estimate
	// simulate prints leaves them out: at the engine's 4 to 10 M events per wall
	// second, 10 to 25 s each.
	maxPeriodicEvents = 100_000_000
)

// DiurnalSteps is how many straight segments trace one period of a diurnal curve,
// a rate's or a background workload's intensity. The largest gap between a cosine
// and its chords is h²/8 times its largest second derivative, which for h =
// period/1440 is (2π/1440)²/8 ≈ 2.4e-6 of the swing: far below sampling noise.
const DiurnalSteps = 1440

// periodic checks that a period of a run of the given duration, each period making
// perPeriod events, makes at most maxPeriodicEvents, and that each step of it is at
// least the simulated clock's nanosecond.
func (v *validator) periodic(path string, period, duration time.Duration, perPeriod int64, what string) {
	switch {
	case period <= 0:
		// Reported by the field's own check.
	case period < time.Duration(perPeriod):
		v.errorf(path, "must be at least %s: %s takes %d steps a period, and simulated time counts nanoseconds", time.Duration(perPeriod), what, perPeriod)
	case float64(duration)/float64(period)*float64(perPeriod) > maxPeriodicEvents:
		v.over(path, fmt.Sprintf("period %s over a run of %s makes %.3g events of %s, which", period, duration, float64(duration)/float64(period)*float64(perPeriod), what),
			maxPeriodicEvents, "events a run", "a longer period, or a shorter run")
	}
}

// sizes checks every size against its limit and reports whether all are within
// them. It runs before the checks that enumerate nodes or pods, which are skipped
// when it fails, so that a huge count is an error at once instead of a hang.
func (v *validator) sizes(s *Scenario) bool {
	before := len(v.diags)
	v.nodeCount(s.Spec.Cluster.Nodes)
	v.podCount(s)
	v.loads(s.Spec.Clients)
	v.byteSizes(s)
	v.seconds(s)
	v.counts(s)
	v.periods(s)
	return len(v.diags) == before
}

// periods checks the settings that make events or segments at a period.
func (v *validator) periods(s *Scenario) {
	run := s.Spec.Duration.Duration
	for i := range s.Spec.Services {
		if a := s.Spec.Services[i].Autoscaler; a != nil {
			at := fmt.Sprintf("spec.services[%d].autoscaler.controller", i)
			if p := a.Controller.SyncPeriod; p != nil {
				v.periodic(at+".syncPeriod", p.Duration, run, 1, "the HPA's syncs")
			}
			if p := a.Controller.MetricResolution; p != nil {
				v.periodic(at+".metricResolution", p.Duration, run, 1, "metrics-server's scrapes")
			}
		}
	}
	for i := range s.Spec.Background {
		b := &s.Spec.Background[i]
		if q, chunk := b.DiskWriteBytesPerSecond, b.DiskWriteChunkBytes; q != nil && chunk != nil && *chunk > 0 {
			// A write every chunk: an event each.
			if n := q.AsApproximateFloat64() / float64(*chunk) * run.Seconds(); n > maxPeriodicEvents {
				v.over(fmt.Sprintf("spec.background[%d].diskWriteChunkBytes", i),
					fmt.Sprintf("writing %s a second in chunks of %d bytes makes %.3g writes over the run, which", q.String(), *chunk, n),
					maxPeriodicEvents, "events a run", "write larger chunks, or a shorter run")
			}
		}
		sc := b.Schedule
		if sc == nil {
			continue
		}
		at := fmt.Sprintf("spec.background[%d].schedule", i)
		if d := sc.Diurnal; d != nil {
			v.periodic(at+".diurnal.period", d.Period.Duration, run, DiurnalSteps, "a diurnal intensity")
		}
		if b := sc.Bursts; b != nil {
			v.periodic(at+".bursts.every", b.Every.Duration, run, 2, "bursts (a start and an end each)")
		}
	}
	for i := range s.Spec.Clients {
		rc := s.Spec.Clients[i].RateCurve
		if rc == nil || rc.Diurnal == nil || rc.Diurnal.Period == nil || rc.Diurnal.Period.Duration <= 0 {
			continue
		}
		at := fmt.Sprintf("spec.clients[%d].rateCurve.diurnal.period", i)
		period := rc.Diurnal.Period.Duration
		if n := float64(run) / float64(period) * DiurnalSteps; n > maxCurveSegments {
			v.over(at, fmt.Sprintf("period %s over a run of %s traces %.3g segments (%d a period), which", period, run, n, DiurnalSteps),
				maxCurveSegments, "segments a run", "a longer period, or a shorter run")
		}
	}
}

// over reports the field at path over limit; instead says what to do.
func (v *validator) over(path, what string, limit any, unit, instead string) {
	v.errorf(path, "%s is over the limit of %v %s; %s", what, limit, unit, instead)
}

func (v *validator) nodeCount(pools []NodePool) {
	total := 0
	for i, p := range pools {
		path := fmt.Sprintf("spec.cluster.nodes[%d].count", i)
		const instead = "model the nodes the pods run on, and scale the load with them"
		switch {
		case p.Count > maxNodes:
			v.over(path, fmt.Sprintf("count %d", p.Count), maxNodes, "nodes a run (Kubernetes' own limit of a cluster)", instead)
			return
		case p.Count > 0 && total+p.Count > maxNodes:
			v.over(path, fmt.Sprintf("count %d brings the cluster to %d nodes, which", p.Count, total+p.Count), maxNodes,
				"nodes a run (Kubernetes' own limit of a cluster)", instead)
			return
		}
		total += max(p.Count, 0)
	}
}

// podCount adds up the pods a run may create, in the order they are written, and
// reports the field that takes the total over maxPods.
func (v *validator) podCount(s *Scenario) {
	// Counted in float64: a count times the rollouts could overflow an int.
	total := 0.0
	add := func(path string, n float64, what string) bool {
		const instead = "model a slice of the service and scale the load with it"
		switch {
		case n > maxPods:
			v.over(path, what, maxPods, "pods a run", instead)
			return false
		case total+n > maxPods:
			v.over(path, fmt.Sprintf("%s brings the run to %.0f pods, which", what, total+n), maxPods, "pods a run", instead)
			return false
		}
		total += n
		return true
	}
	for i := range s.Spec.Services {
		svc := &s.Spec.Services[i]
		path := fmt.Sprintf("spec.services[%d]", i)
		n, at, what := float64(max(svc.Replicas, 0)), path+".replicas", fmt.Sprintf("replicas %d", svc.Replicas)
		if a := svc.Autoscaler; a != nil && float64(a.MaxReplicas) > n {
			n, at, what = float64(a.MaxReplicas), path+".autoscaler.maxReplicas", fmt.Sprintf("maxReplicas %d", a.MaxReplicas)
		}
		if r := float64(len(svc.Rollouts)); r > 0 && n > 0 && n <= maxPods {
			// Each rollout replaces every pod with a new one.
			at = fmt.Sprintf("%s.rollouts[%d]", path, len(svc.Rollouts)-1)
			what = fmt.Sprintf("%s with %d rollout%s (%.0f pods)", what, len(svc.Rollouts), plural(len(svc.Rollouts)), n*(r+1))
			n *= r + 1
		}
		if !add(at, n, what) {
			return
		}
	}
	for i, c := range s.Spec.Clients {
		if !add(fmt.Sprintf("spec.clients[%d].replicas", i), float64(max(c.Replicas, 0)), fmt.Sprintf("replicas %d", c.Replicas)) {
			return
		}
	}
	if n := len(s.Spec.Background); n > 0 {
		add("spec.background", float64(n), fmt.Sprintf("%d background workloads", n))
	}
}

// loads bounds the closed-loop threads, which the engine holds from the start,
// and open loops' rates. What an open loop keeps outstanding depends on how fast
// the pods answer, which only the run tells: the engine bounds it (simulate's
// maxLiveRequests), where rate times timeout would refuse ordinary runs (10,000/s
// with a 30 s timeout could have 300,000 outstanding, and has a few dozen).
func (v *validator) loads(clients []Client) {
	total := 0.0
	for i := range clients {
		c := &clients[i]
		path := fmt.Sprintf("spec.clients[%d]", i)
		threads, at := c.Threads, path+".threads"
		for j, ph := range c.Phases {
			if ph.Threads > threads {
				threads, at = ph.Threads, fmt.Sprintf("%s.phases[%d].threads", path, j)
			}
		}
		rate := func(p string, r *Rate) {
			if r != nil && r.PerSecond > maxRate {
				v.over(p, "rate "+r.String(), fmt.Sprintf("%.0f/s", maxRate), "a client pod",
					"simulated time counts nanoseconds: spread the load over more client pods (replicas)")
			}
		}
		rate(path+".rate", c.Rate)
		for j := range c.Phases {
			rate(fmt.Sprintf("%s.phases[%d].rate", path, j), c.Phases[j].Rate)
			rate(fmt.Sprintf("%s.phases[%d].rampTo", path, j), c.Phases[j].RampTo)
		}
		if rc := c.RateCurve; rc != nil {
			for j := range rc.Points {
				rate(fmt.Sprintf("%s.rateCurve.points[%d].rate", path, j), rc.Points[j].Rate)
			}
			if d := rc.Diurnal; d != nil {
				rate(path+".rateCurve.diurnal.min", d.Min)
				rate(path+".rateCurve.diurnal.max", d.Max)
			}
		}
		if threads <= 0 {
			continue
		}
		n, replicas := float64(threads)*float64(max(c.Replicas, 1)), max(c.Replicas, 1)
		const instead = "model a slice of the clients and scale the service with it"
		switch {
		case n > maxThreads && replicas == 1:
			v.over(at, fmt.Sprintf("threads %d", threads), maxThreads, "threads a run", instead)
			return
		case total+n > maxThreads:
			v.over(at, fmt.Sprintf("threads %d, times %d client pods, brings the run to %.0f threads, which", threads, replicas, total+n),
				maxThreads, "threads a run", instead)
			return
		}
		total += n
	}
}

// byteSizes checks every size in bytes.
func (v *validator) byteSizes(s *Scenario) {
	check := func(path string, n *int64) {
		if n != nil && *n > maxBytes {
			v.over(path, fmt.Sprintf("%d bytes", *n), maxBytes, "bytes (2Gi-1, HTTP/2's largest window)",
				"a larger message only takes longer to send: send several requests")
		}
	}
	windows := func(path string, w *HTTP2Windows) {
		if w != nil {
			check(path+".streamWindowBytes", w.StreamWindowBytes)
			check(path+".connectionWindowBytes", w.ConnectionWindowBytes)
		}
	}
	for i := range s.Spec.Services {
		p := &s.Spec.Services[i].Pod
		at := fmt.Sprintf("spec.services[%d].pod", i)
		check(at+".responseBytes", p.ResponseBytes)
		windows(at+".http2", p.HTTP2)
		if a := p.AccessLog; a != nil {
			check(at+".accessLog.bytes", a.Bytes)
			check(at+".accessLog.bufferBytes", a.BufferBytes)
		}
	}
	for i := range s.Spec.Clients {
		c := &s.Spec.Clients[i]
		at := fmt.Sprintf("spec.clients[%d]", i)
		check(at+".request.headerBytes", c.Request.HeaderBytes)
		check(at+".request.bodyBytes", &c.Request.BodyBytes)
		windows(at+".connections.http2", c.Connections.HTTP2)
	}
	for i := range s.Spec.Background {
		b := &s.Spec.Background[i]
		at := fmt.Sprintf("spec.background[%d]", i)
		check(at+".diskWriteChunkBytes", b.DiskWriteChunkBytes)
		check(at+".diskIOBytes", b.DiskIOBytes)
	}
}

// seconds checks the counts of seconds Kubernetes' fields take, as durations are
// checked when decoded.
func (v *validator) seconds(s *Scenario) {
	check := func(path string, n int64) {
		if n > maxSeconds {
			v.over(path, fmt.Sprintf("%d seconds", n), maxSeconds, "seconds (a year)", "no run is longer than a year")
		}
	}
	for i := range s.Spec.Services {
		svc := &s.Spec.Services[i]
		at := fmt.Sprintf("spec.services[%d]", i)
		check(at+".minReadySeconds", int64(svc.MinReadySeconds))
		p := &svc.Pod
		if g := p.TerminationGracePeriodSeconds; g != nil {
			check(at+".pod.terminationGracePeriodSeconds", *g)
		}
		if l := p.Lifecycle; l != nil && l.PreStop != nil && l.PreStop.Sleep != nil {
			check(at+".pod.lifecycle.preStop.sleep.seconds", l.PreStop.Sleep.Seconds)
		}
		if r := p.ReadinessProbe; r != nil {
			rp := at + ".pod.readinessProbe"
			check(rp+".initialDelaySeconds", int64(r.InitialDelaySeconds))
			for _, f := range []struct {
				name string
				n    *int32
			}{{"periodSeconds", r.PeriodSeconds}, {"timeoutSeconds", r.TimeoutSeconds}} {
				if f.n != nil {
					check(rp+"."+f.name, int64(*f.n))
				}
			}
		}
	}
}

// counts checks the counts that the engine allocates for.
func (v *validator) counts(s *Scenario) {
	workers := 0.0
	sidecar := func(path string, sc *Sidecar, pods float64) {
		if sc == nil || sc.Concurrency == nil || *sc.Concurrency < 1 || *sc.Concurrency > maxSidecarConcurrency {
			return
		}
		n := pods * float64(*sc.Concurrency)
		if workers+n > maxSidecarWorkers {
			v.over(path+".sidecar.concurrency", fmt.Sprintf("concurrency %d in %.0f pods brings the run to %.0f sidecar workers, which", *sc.Concurrency, pods, workers+n),
				maxSidecarWorkers, "workers a run", "fewer workers: Istio's default is 2")
		}
		workers += n
	}
	for i := range s.Spec.Services {
		svc := &s.Spec.Services[i]
		pods := float64(max(svc.Replicas, 0))
		if a := svc.Autoscaler; a != nil {
			pods = max(pods, float64(a.MaxReplicas))
		}
		sidecar(fmt.Sprintf("spec.services[%d]", i), svc.Sidecar, pods*float64(len(svc.Rollouts)+1))
	}
	for i := range s.Spec.Clients {
		sidecar(fmt.Sprintf("spec.clients[%d]", i), s.Spec.Clients[i].Sidecar, float64(max(s.Spec.Clients[i].Replicas, 1)))
	}
	for i := range s.Spec.Clients {
		c := &s.Spec.Clients[i]
		at := fmt.Sprintf("spec.clients[%d]", i)
		if runs := float64(max(len(c.Phases), 1)) * float64(c.Repeat); runs > maxRuns {
			v.over(at+".repeat", fmt.Sprintf("repeat %d of %d phase%s", c.Repeat, max(len(c.Phases), 1), plural(max(len(c.Phases), 1))),
				maxRuns, "runs of the phase list", "repeat fewer times, or run the scenario several times with other seeds")
		}
		if sc := c.Sidecar; sc != nil && sc.Concurrency != nil && *sc.Concurrency > maxSidecarConcurrency {
			v.over(at+".sidecar.concurrency", fmt.Sprintf("concurrency %d", *sc.Concurrency), maxSidecarConcurrency, "workers", "no node has more cores")
		}
	}
	for i := range s.Spec.Services {
		if sc := s.Spec.Services[i].Sidecar; sc != nil && sc.Concurrency != nil && *sc.Concurrency > maxSidecarConcurrency {
			v.over(fmt.Sprintf("spec.services[%d].sidecar.concurrency", i), fmt.Sprintf("concurrency %d", *sc.Concurrency),
				maxSidecarConcurrency, "workers", "no node has more cores")
		}
	}
	if n := s.Spec.Report.Samples; n != nil && *n > maxSamples {
		v.over("spec.report.samples", fmt.Sprintf("samples %d", *n), maxSamples, "requests", "a uniform sample of a million already shows latency over time")
	}
}
