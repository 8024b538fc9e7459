package emulate

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"trafficlab/emulate/proxyrules"
	"trafficlab/emulate/sidecar"
	"trafficlab/emulate/topo"
	"trafficlab/result"
	"trafficlab/scenario"
)

// podSidecar is a pod's sidecar (emulate/sidecar: nginx in Envoy's place) and what
// it used over the run.
type podSidecar struct {
	pod, node string
	inbound   bool
	limit     float64 // cores; 0: none
	proxy     *sidecar.Proxy
	// cpu and workers are the CPU used, the whole container's and each worker's,
	// when the load started and when it ended, read at marked.
	cpuAtStart, cpuAtEnd         time.Duration
	workersAtStart, workersAtEnd []time.Duration
	marked                       [2]time.Time
	stats                        sidecar.Stats
	statsErr                     error
}

// startSidecar starts pod's sidecar s: inbound in front of its app, else sending what
// the client's app sends to the Service at intercept to the Service's pods.
func (c *cluster) startSidecar(ctx context.Context, pod *topo.Pod, s *scenario.Sidecar, inbound bool, intercept netip.AddrPort, upstreams []netip.AddrPort) (*podSidecar, error) {
	if c.sidecarDir == "" {
		dir, err := os.MkdirTemp("", "trafficlab-emulate-sidecars-")
		if err != nil {
			return nil, err
		}
		c.sidecarDir = dir
	}
	cfg := sidecar.Config{Inbound: inbound, AppPort: podPort, Intercept: intercept, Upstreams: upstreams,
		Workers: *s.Concurrency, PerRequestCPU: s.PerRequestCPU.Duration, LBPolicy: s.LBPolicy, Retries: *s.Retries.Attempts}
	ps := &podSidecar{pod: pod.Name, node: pod.Node, inbound: inbound}
	var milli int64
	if s.CPU != nil {
		milli, ps.limit = s.CPU.MilliValue(), s.CPU.AsApproximateFloat64()
	}
	p, err := sidecar.Start(ctx, c.spawner.start, pod.NS, filepath.Join(c.sidecarDir, pod.Name), c.net.Prefix()+pod.Name+"-istio-proxy", milli, cfg)
	if err != nil {
		return nil, fmt.Errorf("pod %s: %w", pod.Name, err)
	}
	ps.proxy = p
	c.sidecars = append(c.sidecars, ps)
	return ps, nil
}

// startSidecars starts the sidecars of the service pods, then the client pods',
// which send to the service pods' addresses what their apps send to services.
func (c *cluster) startSidecars(ctx context.Context, services []proxyrules.Service) error {
	for _, s := range c.servers {
		if spec := c.sc.Spec.Services[serviceIndex(c.sc, s.service)].Sidecar; spec != nil {
			if _, err := c.startSidecar(ctx, s.net, spec, true, netip.AddrPort{}, nil); err != nil {
				return err
			}
		}
	}
	for _, cp := range c.clients {
		client := &c.sc.Spec.Clients[cp.placed.Index]
		if client.Sidecar == nil {
			continue
		}
		var upstreams []netip.AddrPort
		for _, s := range c.servers {
			if s.service == client.Target {
				upstreams = append(upstreams, s.addr())
			}
		}
		svc := services[serviceIndex(c.sc, client.Target)]
		if _, err := c.startSidecar(ctx, cp.net, client.Sidecar, false, netip.AddrPortFrom(svc.ClusterIP, uint16(svc.Port)), upstreams); err != nil {
			return err
		}
	}
	return nil
}

// markSidecars notes what each sidecar has used when the load starts (at start)
// or ends (at end).
func (c *cluster) markSidecars(start bool) {
	for _, ps := range c.sidecars {
		cpu, _ := ps.proxy.Usage()
		workers, _ := ps.proxy.WorkerCPU()
		if start {
			ps.cpuAtStart, ps.workersAtStart, ps.marked[0] = cpu, workers, time.Now()
		} else {
			ps.cpuAtEnd, ps.workersAtEnd, ps.marked[1] = cpu, workers, time.Now()
		}
	}
}

// sidecarStatsTimeout bounds the wait for a sidecar's counts at the end: its workers
// answer once they are through what was queued when the load stopped.
const sidecarStatsTimeout = 10 * time.Second

// readSidecarStats asks every sidecar for its counts, once the load is over.
func (c *cluster) readSidecarStats(ctx context.Context) {
	for _, ps := range c.sidecars {
		ctx, cancel := context.WithTimeout(ctx, sidecarStatsTimeout)
		ps.stats, ps.statsErr = ps.proxy.Stats(ctx)
		cancel()
		if ps.statsErr != nil {
			c.logf("warning: sidecar of %s did not give its counts: %v", ps.pod, ps.statsErr)
		}
	}
}

// sidecarResults are the sidecars as simulate reports them. Their use is over the
// time between the marks, which is the run's with the few milliseconds the client
// pods take to report. WorkerUtilization is each worker's time on CPU: a worker that
// waits for its CPU limit with requests queued counts as idle meanwhile, where
// simulate counts it busy.
func (c *cluster) sidecarResults() []result.Sidecar {
	cores := nodeCores(c)
	var out []result.Sidecar
	for _, ps := range c.sidecars {
		rs := result.Sidecar{Pod: ps.pod, Node: ps.node, Direction: result.SidecarOutbound, Workers: ps.proxy.Workers(), CPULimit: ps.limit,
			Requests: ps.stats.Requests, Retries: ps.stats.Retries, HTTP503: ps.stats.HTTP503}
		if ps.inbound {
			rs.Direction = result.SidecarInbound
		}
		if dur := ps.marked[1].Sub(ps.marked[0]).Seconds(); !ps.marked[0].IsZero() && dur > 0 {
			used := (ps.cpuAtEnd - ps.cpuAtStart).Seconds()
			rs.CPUCores = result.Round(used/dur, 4)
			if capacity := cmp.Or(ps.limit, cores[ps.node]); capacity > 0 {
				rs.CPUUtilization = result.Round(used/(capacity*dur), 4)
			}
			if n := len(ps.workersAtEnd); n > 0 && n == len(ps.workersAtStart) {
				busy := 0.0
				for i := range n {
					busy += (ps.workersAtEnd[i] - ps.workersAtStart[i]).Seconds()
				}
				rs.WorkerUtilization = result.Round(busy/(float64(n)*dur), 4)
			}
		}
		out = append(out, rs)
	}
	return out
}
