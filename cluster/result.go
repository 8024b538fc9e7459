package cluster

import (
	"cmp"
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trafficlab/emulate/load"
	"trafficlab/emulate/serve"
	"trafficlab/model/kubeproxy"
	"trafficlab/result"
)

// result fills the Result simulate fills from what the load pods reported, what
// the watch saw the cluster do, the CPU its kubelets read and the timeline tl the
// load pods' intervals went into. Counts per pod come
// from the clients' side: the answers each pod gave, named by its
// X-Trafficlab-Pod header.
func (e *engine) result(pods []*loadPod, ran time.Duration, cpu *cpuMeter, tl *load.Timeline) *result.Result {
	spec := &e.sc.Spec
	dur := ran.Seconds()
	r := &result.Result{
		Engine: "cluster", Scenario: e.sc.Metadata.Name, Seed: spec.Seed, DurationS: dur,
		Cluster: e.found, ProxyMode: spec.Cluster.ProxyMode, TimelineIntervalS: 1,
		SlowThresholdMS: float64(spec.Report.SlowThreshold.Duration) / 1e6,
		Services:        e.sc.ServiceConfigs(),
	}
	if m := kubeproxy.Parse(e.found.ProxyMode); m.Known() {
		r.ProxyMode = m
	}
	var reps []*load.Report
	runs := make([]load.PodRun, 0, len(pods))
	for _, p := range pods {
		// The load pods' CPU is their generator's own: the kubelets' figures
		// come every 10 s or so, too seldom for a run of seconds.
		if p.run.Report != nil {
			reps = append(reps, p.run.Report)
			p.run.CPUUsed = time.Duration(p.run.Report.CPUS * float64(time.Second))
		}
		runs = append(runs, p.run)
	}
	sum := load.Add(reps)
	sum.Fill(r, dur)
	cores := e.nodeCores()
	r.Pods, r.Nodes = e.podResults(sum.Pods, runs, dur, cores, cpu)
	if e.figs != nil {
		serve.AddFigures(r, e.sc, e.figs.all())
	}
	load.SlowShares(r.Pods, r.Nodes, sum.Pods)
	r.Clients = load.Clients(e.sc, runs, dur, cores)
	r.Timeline = tl.Points(reps, r.TimelineIntervalS, e.watch.replicasAt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reasons, err := rescales(ctx, e.cs, e.ns)
	if err != nil {
		reasons = nil // the events are gone or unreadable: scale events keep no reason
	}
	r.ScaleEvents = e.watch.scaleEvents(reasons)
	r.Rollouts = e.watch.rolloutResults()
	return r
}

// podResults are the service pods, in the order the watch first saw them, and
// the nodes the run's pods were on.
func (e *engine) podResults(counted map[string]load.Pod, runs []load.PodRun, dur float64, cores map[string]float64, cpu *cpuMeter) ([]result.Pod, []result.Node) {
	w := e.watch
	var pods []result.Pod
	running := map[string]int{}
	for _, l := range w.lives() {
		c := counted[l.name]
		rp := result.Pod{Name: l.name, Service: l.service, Node: l.node, StartS: w.since(l.created),
			Requests: c.Requests, Connections: c.Connections, QoSClass: l.qos}
		if !l.ready.IsZero() {
			rp.ReadyS = seconds(w.since(l.ready))
		}
		if !l.deleting.IsZero() {
			rp.DeletedS = seconds(w.since(l.deleting))
		}
		if !l.gone.IsZero() {
			rp.EndS = seconds(w.since(l.gone))
		} else {
			running[l.node]++ // as simulate counts them: those running at the end
		}
		if l.limitCPU > 0 { // CFS bandwidth counts only under a limit
			rp.Throttling = cpu.throttling(l.name, l.created.After(w.start))
		}
		if used, ok := cpu.pod(l.name); ok {
			rp.CPUCores = result.Round(used, 4)
			if capacity := cmp.Or(l.limitCPU, cores[l.node]); capacity > 0 {
				rp.CPUUtilization = result.Round(used/capacity, 4)
			}
		}
		pods = append(pods, rp)
	}
	clientUsed := map[string]float64{}
	for _, p := range runs {
		if dur > 0 {
			clientUsed[p.Node] += p.CPUUsed.Seconds() / dur
		}
	}
	var nodes []result.Node
	for _, n := range w.nodes() {
		rn := result.Node{Name: n, CPU: cores[n], Pods: running[n], ClientCPUCores: result.Round(clientUsed[n], 4)}
		if used, ok := cpu.node(n); ok && cores[n] > 0 {
			rn.CPUUtilization = result.Round(used/cores[n], 4)
		}
		nodes = append(nodes, rn)
	}
	return pods, nodes
}

func seconds(s float64) *float64 { return &s }

// nodeCores is the allocatable CPU of each node the run's pods were on, in cores.
func (e *engine) nodeCores() map[string]float64 {
	out := map[string]float64{}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, name := range e.watch.nodes() {
		if n, err := e.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); err == nil {
			out[name] = n.Status.Allocatable.Cpu().AsApproximateFloat64()
		}
	}
	return out
}
