package main

import (
	"fmt"
	"strings"

	"trafficlab/result"
)

// The examples of services that call services.

// edge is the run's call from one service to another.
func edge(r *result.Result, from, to string) (result.Edge, error) {
	for _, e := range r.Edges {
		if e.From == from && e.To == to {
			return e, nil
		}
	}
	return result.Edge{}, fmt.Errorf("%s has no call %s → %s", r.Scenario, from, to)
}

// serviceP99 is a service's p99 at its pods.
func serviceP99(r *result.Result, name string) (float64, error) {
	for _, s := range r.Services {
		if s.Name == name && s.LatencyMS != nil {
			return s.LatencyMS.P99, nil
		}
	}
	return 0, fmt.Errorf("%s has no figures of service %s", r.Scenario, name)
}

const shop = "calls-three-tier-shop.yaml"

func shopTable(l *lab) (string, error) {
	r, err := l.result(shop)
	if err != nil {
		return "", err
	}
	b := &strings.Builder{}
	fmt.Fprintf(b, "\n| call (%s) | rate | p50 | p99 | time at the callee's pods, p99 |\n|---|---|---|---|---|\n", ranWith(r))
	front, err := serviceP99(r, "frontend")
	if err != nil {
		return "", err
	}
	fmt.Fprintf(b, "| users → frontend | %s/s | %s ms | %s ms | %s ms |\n", whole(r.RateRPS), millis(r.LatencyMS.P50), millis(r.LatencyMS.P99), millis(front))
	for _, hop := range [][2]string{{"frontend", "cart"}, {"cart", "db"}} {
		e, err := edge(r, hop[0], hop[1])
		if err != nil {
			return "", err
		}
		at, err := serviceP99(r, hop[1])
		if err != nil {
			return "", err
		}
		fmt.Fprintf(b, "| %s → %s | %s/s | %s ms | %s ms | %s ms |\n", hop[0], hop[1], whole(float64(e.Requests)/r.DurationS),
			millis(e.LatencyMS.P50), millis(e.LatencyMS.P99), millis(at))
	}
	return b.String(), nil
}

func shopHPA(l *lab) (string, error) {
	r, err := l.result(shop)
	if err != nil {
		return "", err
	}
	if len(r.ScaleEvents) != 1 || r.ScaleEvents[0].Service != "frontend" {
		return "", claim("the frontend's HPA adds pods … once", "the run's scale events are %+v", r.ScaleEvents)
	}
	ev := r.ScaleEvents[0]
	return fmt.Sprintf("from %d to %d pods at %g s", ev.From, ev.To, ev.TS), nil
}

// shopCartShare is the cart's share of the frontend's time at its pods, p99 to p99.
func shopCartShare(l *lab) (string, error) {
	r, err := l.result(shop)
	if err != nil {
		return "", err
	}
	front, err := serviceP99(r, "frontend")
	if err != nil {
		return "", err
	}
	e, err := edge(r, "frontend", "cart")
	if err != nil {
		return "", err
	}
	if e.LatencyMS.P99 < front/2 {
		return "", claim("most of the frontend's time is its wait for the cart", "the call's p99 is %.1f ms of the frontend's %.1f ms", e.LatencyMS.P99, front)
	}
	return fmt.Sprintf("%s ms of the frontend's %s ms", millis(e.LatencyMS.P99), millis(front)), nil
}

const fanOut = "calls-fan-out.yaml"

// fanOutSerial makes the page's four calls one after another.
var fanOutSerial = []string{"spec.services[0].pod.calls=[{service: profile}, {service: catalog}, {service: pricing}, {service: reviews}]"}

func fanOutTable(l *lab) (string, error) {
	rs, err := l.results(run{fanOut, nil}, run{fanOut, fanOutSerial})
	if err != nil {
		return "", err
	}
	b := &strings.Builder{}
	fmt.Fprintf(b, "\n| calls (%s) | each callee's p99, as the page saw it | page p50 | page p99 |\n|---|---|---|---|\n", ranWith(rs[0]))
	for i, name := range []string{"at once (the file)", "one after another (" + sets(fanOutSerial) + ")"} {
		r := rs[i]
		var callee []string
		top := 0.0
		for _, e := range r.Edges {
			callee = append(callee, millis(e.LatencyMS.P99))
			top = max(top, e.LatencyMS.P99)
		}
		if r.LatencyMS.P99 <= top {
			return "", claim("the page's p99 is above every callee's own", "%s: the page's p99 is %.1f ms, a callee's %.1f ms", name, r.LatencyMS.P99, top)
		}
		fmt.Fprintf(b, "| %s | %s ms | %s ms | %s ms |\n", name, strings.Join(callee, ", "), millis(r.LatencyMS.P50), millis(r.LatencyMS.P99))
	}
	if at, serial := rs[0].LatencyMS, rs[1].LatencyMS; serial.P50 <= at.P50 || serial.P99 <= at.P99 {
		return "", claim("one after another the calls add up instead, which is slower still, at the median as at the p99",
			"the page's p50 and p99 are %.1f and %.1f ms at once, %.1f and %.1f ms one after another", at.P50, at.P99, serial.P50, serial.P99)
	}
	return b.String(), nil
}

const r1InCluster = "r1-in-cluster.yaml"

var r1InClusterRows = [][]string{
	nil,
	{"spec.services[0].replicas=2"},
	{"spec.services[0].replicas=4"},
	{"spec.services[0].pod.client.connections.maxLifetime=5s"},
}

func r1InClusterTable(l *lab) (string, error) {
	var runs []run
	for _, sets := range r1InClusterRows {
		runs = append(runs, run{r1InCluster, sets})
	}
	rs, err := l.results(runs...)
	if err != nil {
		return "", err
	}
	var idles []int
	var busiests []float64
	b := &strings.Builder{}
	fmt.Fprintf(b, "\n| frontend (%s) | connections to webapp1 (at most open at once) | webapp1 pods idle | busiest pod's share |\n|---|---|---|---|\n", ranWith(rs[0]))
	for i, s := range r1InClusterRows {
		r := rs[i]
		e, err := edge(r, "frontend", "webapp1")
		if err != nil {
			return "", err
		}
		name := "1 pod (the file)"
		if s != nil {
			name = sets(s)
		}
		var pods []result.Pod
		for _, p := range r.Pods {
			if p.Service == "webapp1" {
				pods = append(pods, p)
			}
		}
		busiest := 0.0
		for _, sh := range shares(&result.Result{Pods: pods}) {
			busiest = max(busiest, sh)
		}
		fmt.Fprintf(b, "| %s | %s (%d) | %d of %d | %s |\n", name, count(e.ConnectionsOpened), e.PeakOpen,
			idle(&result.Result{Pods: pods}), len(pods), pct(busiest, 0))
		idles, busiests = append(idles, idle(&result.Result{Pods: pods})), append(busiests, busiest)
	}
	if idles[0] == 0 || busiests[2] >= busiests[0] || busiests[3] >= busiests[0] {
		return "", claim("some pods get none … More frontend pods open more connections and spread the load; so does recycling them",
			"the file's run left %d pods idle, and the busiest pod's shares are %v", idles[0], busiests)
	}
	return b.String(), nil
}

const storm = "calls-retry-storm.yaml"

var stormRows = []struct {
	name string
	sets []string
}{
	{"both tiers, 2 each (the file)", nil},
	{"the frontend only", []string{"spec.services[1].pod.calls[0].retries=0"}},
	{"the orders service only", []string{"spec.services[0].pod.calls[0].retries=0"}},
	{"neither", []string{"spec.services[0].pod.calls[0].retries=0", "spec.services[1].pod.calls[0].retries=0"}},
}

// stormWindows are the spans the table counts failures in: before, during and after
// the slowdown (2 s to 4 s).
var stormWindows = [][2]float64{{0, 2}, {2, 4}, {4, 10}, {10, 40}}

func stormTable(l *lab) (string, error) {
	var runs []run
	for _, row := range stormRows {
		runs = append(runs, run{storm, row.sets})
	}
	rs, err := l.results(runs...)
	if err != nil {
		return "", err
	}
	b := &strings.Builder{}
	fmt.Fprintf(b, "\n| retries at (%s) | requests ended, failed: before (0–2 s) | during (2–4 s) | after (4–10 s) | later (10–40 s) | db attempts per request |\n|---|---|---|---|---|---|\n", ranWith(rs[0]))
	for i, row := range stormRows {
		r := rs[i]
		var cells []string
		for _, w := range stormWindows {
			var failed, all int64
			for _, p := range r.Timeline {
				if p.TS >= w[0] && p.TS < w[1] {
					failed += p.Errors
					all += p.Requests
				}
			}
			cells = append(cells, fmt.Sprintf("%s of %s", count(failed), count(all)))
		}
		db, err := edge(r, "orders", "db")
		if err != nil {
			return "", err
		}
		name := row.name
		if row.sets != nil {
			name += " (" + sets(row.sets) + ")"
		}
		fmt.Fprintf(b, "| %s | %s | %.2f |\n", name, strings.Join(cells, " | "), float64(db.Attempts)/float64(r.Requests.Total+r.Requests.InFlight))
	}
	return b.String(), nil
}

// stormStaysDown checks the sentence that the file's run stays down after the
// slowdown and that retrying at one tier recovers, and writes its figure.
func stormStaysDown(l *lab) (string, error) {
	rs, err := l.results(run{storm, nil}, run{storm, stormRows[1].sets}, run{storm, stormRows[2].sets})
	if err != nil {
		return "", err
	}
	late := func(r *result.Result) (failed, all int64) {
		for _, p := range r.Timeline {
			if p.TS >= 10 {
				failed, all = failed+p.Errors, all+p.Requests
			}
		}
		return failed, all
	}
	f, all := late(rs[0])
	front, _ := late(rs[1])
	orders, _ := late(rs[2])
	if float64(f) < 0.9*float64(all) || front != 0 || orders != 0 {
		return "", claim("the failures outlive the slowdown … Retrying at one tier only … the failures stop with it",
			"after 10 s %d of %d failed with both tiers retrying, %d and %d with one", f, all, front, orders)
	}
	return fmt.Sprintf("%s of the %s requests that ended after 10 s failed", count(f), count(all)), nil
}

// stormMultiply is the retry storm's attempts at the database per call of the
// frontend to orders, as the text report computes it.
func stormMultiply(l *lab) (string, error) {
	r, err := l.result(storm)
	if err != nil {
		return "", err
	}
	x, err := edge(r, "frontend", "orders")
	if err != nil {
		return "", err
	}
	y, err := edge(r, "orders", "db")
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%.1f attempts at the database", float64(y.Attempts)/float64(x.Attempts-x.Retries)), nil
}
