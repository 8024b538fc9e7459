package load

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"trafficlab/model/library"
	"trafficlab/scenario"
)

// defaultTimeout bounds a request when neither the client nor its library sets a
// timeout, as scenario/defaults.go does: a run needs some bound.
const defaultTimeout = 30 * time.Second

// diurnalSteps is how many straight segments trace one period of a diurnal rate
// curve, as simulate/loadgen/curve.go traces it.
const diurnalSteps = 1440

// FromClient builds the load of one pod of client c against target (the URL the
// Service answers on) for the given run length and seed. c is normally a client of
// a scenario loaded with scenario.Load, whose defaults are filled; fields left unset
// here (Timeout, Connections) are filled from c's library profile and then the
// scenario defaults, so a hand-built client works too. Replicas is not read: each
// client pod runs its own load.
func FromClient(c *scenario.Client, target string, duration time.Duration, seed int64) (Config, error) {
	if c == nil {
		return Config{}, errors.New("no client")
	}
	if c.Sidecar != nil {
		return Config{}, fmt.Errorf("client %q: a client sidecar is not emulated by load; drop spec.clients[].sidecar or use simulate", c.Name)
	}
	profile, hasProfile := library.Lookup(c.Library)
	if c.Library != "" && !hasProfile {
		return Config{}, fmt.Errorf("unknown library %q; known: %s", c.Library, strings.Join(library.Names(), ", "))
	}
	cfg := Config{
		Target: target, Duration: duration, Seed: seed, Name: c.Name, Library: c.Library,
		Repeat: c.Repeat, Arrival: c.Arrival, MaxInFlight: c.MaxInFlight,
		ThinkTime: c.ThinkTime, Overhead: c.Overhead.Duration,
		AbortsRun:  hasProfile && profile.AbortsRun,
		Resolution: library.ResolutionOf(c.Library),
		Method:     c.Request.Method, BodyBytes: c.Request.BodyBytes,
	}
	if c.Request.HeaderBytes != nil {
		cfg.HeaderBytes = *c.Request.HeaderBytes
	}
	switch {
	case c.Timeout != nil:
		cfg.Timeout = c.Timeout.Duration
	case hasProfile && profile.Timeout > 0:
		cfg.Timeout = profile.Timeout
	default:
		cfg.Timeout = defaultTimeout
	}
	var err error
	if cfg.Phases, err = phasesOf(c, duration); err != nil {
		return Config{}, err
	}
	cfg.Conn = connectionsOf(c.Connections, profile, hasProfile)
	return cfg, cfg.check()
}

// phasesOf turns a client's threads, rate, rate curve or phases into Phases.
func phasesOf(c *scenario.Client, run time.Duration) ([]Phase, error) {
	switch {
	case len(c.Phases) > 0:
		out := make([]Phase, len(c.Phases))
		for i, p := range c.Phases {
			out[i] = Phase{Name: p.Name, Threads: p.Threads, Requests: p.Requests}
			if p.Rate != nil {
				out[i].Rate = p.Rate.PerSecond
			}
			if p.RampTo != nil {
				out[i].RampTo = p.RampTo.PerSecond
			}
			if p.Duration != nil {
				out[i].Duration = p.Duration.Duration
			}
			if p.Pause != nil {
				out[i].Pause = p.Pause.Duration
			}
		}
		return out, nil
	case c.RateCurve != nil:
		return curvePhases(c.RateCurve, run)
	case c.Rate != nil:
		return []Phase{{Rate: c.Rate.PerSecond}}, nil
	default:
		return []Phase{{Threads: c.Threads}}, nil
	}
}

// curvePhases traces a rate curve as ramps, one phase per straight segment, as
// simulate/loadgen/curve.go does; the last rate holds to the end of the run. Each segment
// starts its own arrival count, so a constant-arrival curve may send one request
// more per segment than the continuous curve would.
func curvePhases(rc *scenario.RateCurve, run time.Duration) ([]Phase, error) {
	type point struct {
		t    time.Duration
		rate float64
	}
	var pts []point
	if d := rc.Diurnal; d != nil {
		if d.Min == nil || d.Max == nil || d.Period == nil || d.Period.Duration <= 0 {
			return nil, errors.New("rateCurve.diurnal needs min, max and a period")
		}
		period, peak := d.Period.Duration, d.PeakAt.Duration
		lo, hi := d.Min.PerSecond, d.Max.PerSecond
		step := max(period/diurnalSteps, time.Millisecond)
		for t := time.Duration(0); ; t += step {
			x := 2 * math.Pi * float64(t-peak) / float64(period)
			pts = append(pts, point{t, lo + (hi-lo)*(1+math.Cos(x))/2})
			if t >= run {
				break
			}
		}
	} else {
		if len(rc.Points) == 0 {
			return nil, errors.New("rateCurve needs points or diurnal")
		}
		for i, p := range rc.Points {
			if p.Rate == nil {
				return nil, fmt.Errorf("rateCurve.points[%d] has no rate", i)
			}
			if i == 0 && p.At.Duration > 0 {
				pts = append(pts, point{0, p.Rate.PerSecond})
			}
			pts = append(pts, point{p.At.Duration, p.Rate.PerSecond})
		}
	}
	var out []Phase
	for i, p := range pts {
		if i+1 == len(pts) {
			out = append(out, Phase{Rate: p.rate})
			break
		}
		if span := pts[i+1].t - p.t; span > 0 {
			out = append(out, Phase{Rate: p.rate, RampTo: pts[i+1].rate, Duration: span})
		}
	}
	return out, nil
}

// connectionsOf fills the connection settings a client left unset from its library
// profile, then from the scenario defaults (shared, HTTP/1.1, no limits), as
// scenario/defaults.go defaultConnections does.
func connectionsOf(sc scenario.Connections, p library.Profile, hasProfile bool) Connections {
	if !hasProfile {
		p = library.Profile{Reuse: scenario.ReuseShared, Protocol: scenario.ProtocolHTTP1}
	}
	c := Connections{
		Reuse: sc.Reuse, Protocol: sc.Protocol, LoadBalancing: sc.LoadBalancing,
		MaxPerHost: p.MaxPerHost, MaxIdlePerHost: p.MaxIdlePerHost,
		IdleTimeout: p.IdleTimeout, MaxLifetime: p.MaxLifetime,
		IdlePick: p.IdlePick, UncheckedIdle: p.UncheckedIdle, RetriesStale: p.RetriesStaleIdempotent,
	}
	if c.Reuse == "" {
		c.Reuse = p.Reuse
	}
	if c.Reuse == "" {
		c.Reuse = scenario.ReuseShared
	}
	if c.Protocol == "" {
		c.Protocol = p.Protocol
	}
	if c.Protocol == "" {
		c.Protocol = scenario.ProtocolHTTP1
	}
	if sc.MaxPerHost != nil {
		c.MaxPerHost = *sc.MaxPerHost
	}
	if sc.MaxIdlePerHost != nil {
		c.MaxIdlePerHost = *sc.MaxIdlePerHost
	}
	if sc.IdleTimeout != nil {
		c.IdleTimeout = sc.IdleTimeout.Duration
	}
	if sc.MaxLifetime != nil {
		c.MaxLifetime = sc.MaxLifetime.Duration
	}
	if w := sc.HTTP2; w != nil {
		if w.StreamWindowBytes != nil {
			c.StreamWindowBytes = *w.StreamWindowBytes
		}
		if w.ConnectionWindowBytes != nil {
			c.ConnectionWindowBytes = *w.ConnectionWindowBytes
		}
	}
	return c
}
