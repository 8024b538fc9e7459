package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"trafficlab/examples"
	"trafficlab/scenario"
)

// gRPC channels behind a ClusterIP while the HPA scales out.
const grpcHPA = "grpc-hpa-max-connection-age.yaml"

var grpcHPARows = []scaleOutRow{
	{"grpc-go, pick_first", nil},
	{"grpc-go, the server's connections aged", []string{"spec.services[0].pod.grpc.maxConnectionAge=30s"}},
	{"grpc-go, round_robin over a headless Service", headlessRoundRobin},
	{"grpc-go, round_robin over a headless Service, the server's connections aged",
		append(slices.Clip(headlessRoundRobin), "spec.services[0].pod.grpc.maxConnectionAge=30s")},
}

var headlessRoundRobin = []string{"spec.services[0].clusterIP=None", "spec.clients[0].connections.loadBalancing=round_robin"}

func grpcHPATable(l *lab) (string, error) { return scaleOutTable(l, grpcHPA, grpcHPARows, "calls") }

// grpcHPAPinned: every channel kept the one connection it opened, so the pods the
// HPA added got no call.
func grpcHPAPinned(l *lab) (string, error) {
	r, err := l.result(grpcHPA)
	if err != nil {
		return "", err
	}
	c := r.Clients[0]
	var toNew int64
	for _, p := range newPods(r) {
		toNew += p.Requests
	}
	if c.ConnectionsOpened != int64(c.Replicas) || toNew != 0 || len(newPods(r)) == 0 {
		return "", claim("each channel kept its one connection … the new pods got no call",
			"%d connections for %d client pods, %d calls to %d new pods", c.ConnectionsOpened, c.Replicas, toNew, len(newPods(r)))
	}
	var held, used []string
	sum := 0.0
	for _, p := range r.Pods {
		if p.StartS == 0 {
			held = append(held, fmt.Sprintf("%s %s", p.Name, plural(p.Connections, "connection")))
			used = append(used, pct(p.CPUUtilization, 0))
			sum += p.CPUUtilization
		}
	}
	// The HPA's replica count: ceil(current × average / target), here with the new
	// pods' nothing in the average.
	n := len(r.Pods)
	avg := sum / float64(n)
	target, err := hpaTarget(grpcHPA)
	if err != nil {
		return "", err
	}
	want := int(math.Ceil(float64(n) * avg / target))
	if len(r.ScaleEvents) != 1 || want > n {
		return "", claim("so it adds no more", "%d scale events; %d pods at %.2f against %.2f ask for %d", len(r.ScaleEvents), n, avg, target, want)
	}
	return fmt.Sprintf("the %d client pods opened %d connections in %s (%s), and the %d new pods got no call. "+
		"The old pods used %s of their core and the new ones none: an average of %s over %d pods, for which the HPA "+
		"asks for %d (%d × %s / %s, rounded up), so it adds no more",
		c.Replicas, c.ConnectionsOpened, span(r.DurationS), and(held), len(newPods(r)), and(used), pct(avg, 0), n, want, n, pct(avg, 0), pct(target, 0)), nil
}

// hpaTarget is the CPU utilization the first service of example file scales to,
// as a share.
func hpaTarget(file string) (float64, error) {
	data, err := examples.Get(file)
	if err != nil {
		return 0, err
	}
	sc, _, diags := scenario.Load(file, data, nil)
	if diags.HasErrors() {
		return 0, diags
	}
	a := sc.Spec.Services[0].Autoscaler
	if a == nil || len(a.Metrics) == 0 || a.Metrics[0].Resource == nil || a.Metrics[0].Resource.Target.AverageUtilization == nil {
		return 0, fmt.Errorf("%s: no CPU utilization target", file)
	}
	return float64(*a.Metrics[0].Resource.Target.AverageUtilization) / 100, nil
}

// grpcHPAAged: with the server's connection age, the channels reconnect all along
// and no call fails.
func grpcHPAAged(l *lab) (string, error) {
	r, err := l.result(grpcHPA, grpcHPARows[1].sets...)
	if err != nil {
		return "", err
	}
	if r.Errors.Total() != 0 || r.Requests.Failed != 0 {
		return "", claim("none fails", "errors %+v", r.Errors)
	}
	return fmt.Sprintf("the 4 channels opened %d connections in %s, and none of %s calls failed",
		r.Clients[0].ConnectionsOpened, span(r.DurationS), count(r.Requests.Total)), nil
}

// gRPC channels over 5 pods, behind a ClusterIP and over a headless Service.
const grpcHeadless = "grpc-headless-round-robin.yaml"

var grpcHeadlessRows = []scaleOutRow{
	{"ClusterIP, pick_first", nil},
	{"headless, pick_first", []string{"spec.services[0].clusterIP=None"}},
	{"headless, round_robin", headlessRoundRobin},
}

// grpcHeadlessTable tables each pod's share of the calls and the connections the
// channels held, by how the Service and the channel spread them.
func grpcHeadlessTable(l *lab) (string, error) {
	var runs []run
	for _, row := range grpcHeadlessRows {
		runs = append(runs, run{grpcHeadless, row.sets})
	}
	rs, err := l.results(runs...)
	if err != nil {
		return "", err
	}
	b := &strings.Builder{}
	fmt.Fprintf(b, "\n| service, channel | calls per pod (%s) | connections | throughput, p99 |\n|---|---|---|---|\n", ranWith(rs[0]))
	for i, row := range grpcHeadlessRows {
		r := rs[i]
		client := row.client
		if row.sets != nil {
			client += " (" + sets(row.sets) + ")"
		}
		var shares []string
		for _, p := range r.Pods {
			shares = append(shares, pct(float64(p.Requests)/float64(r.Requests.OK+r.Requests.Failed), 0))
		}
		fmt.Fprintf(b, "| %s | %s | %d | %s rps, %s ms |\n", client, strings.Join(shares, " · "),
			r.Clients[0].ConnectionsOpened, whole(r.ThroughputRPS), millis(r.LatencyMS.P99))
	}
	return b.String(), nil
}
