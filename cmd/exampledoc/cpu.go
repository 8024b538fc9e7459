package main

import (
	"fmt"
	"strings"

	"trafficlab/model/kubeproxy"
	"trafficlab/model/library"
	"trafficlab/result"
)

// The CPU callers and kube-proxy spend: R1's caller, R2's userspace relay, R5's
// load generator.

// clientCPU is a run's first client's own CPU, which the region needs modelled.
func clientCPU(r *result.Result, file string) (*result.Client, error) {
	if len(r.Clients) == 0 || r.Clients[0].CPUCores == 0 {
		return nil, fmt.Errorf("%s: the client's CPU is not modelled", file)
	}
	return &r.Clients[0], nil
}

func r1CallerCPU(l *lab) (string, error) {
	rs, err := l.results(run{file: "r1-reused-client-1-thread.yaml"}, run{file: "r1-new-client-per-request.yaml"})
	if err != nil {
		return "", err
	}
	reused, err := clientCPU(rs[0], "r1-reused-client-1-thread.yaml")
	if err != nil {
		return "", err
	}
	fresh, err := clientCPU(rs[1], "r1-new-client-per-request.yaml")
	if err != nil {
		return "", err
	}
	ratio := reused.CPUCores / fresh.CPUCores
	switch {
	case ratio <= 1:
		return "", claim("the caller's CPU falls with a new client per request", "reused %v cores, new %v", reused.CPUCores, fresh.CPUCores)
	case ratio > r1CPURatio/2 && ratio < r1CPURatio*2:
		return "", claim("R1's ratio of 5.75 is not reproduced", "the runs give %.1f", ratio)
	}
	return fmt.Sprintf("%s of a core with the reused client and %s with a new client per request, %.0f× less",
		pct(reused.CPUCores, 1), pct(fresh.CPUCores, 2), ratio), nil
}

// r1CPURatio is R1's caller CPU reused over a new client per request: 69 % / 12 %.
const r1CPURatio = 69.0 / 12

// R2: the same 3 pods under iptables and userspace, for the file's app and lighter
// ones; R2 gives no figure for its app's CPU.
const r2PodsFile = "r2-ab-pods-on-3-nodes.yaml"

var r2AppCosts = []struct{ label, mean string }{
	{"1 ms (as written)", ""},
	{"0.5 ms", "500us"},
	{"0.2 ms", "200us"},
}

func r2UserspaceRuns(l *lab) ([]*result.Result, error) {
	var runs []run
	for _, app := range r2AppCosts {
		for _, mode := range []string{"iptables", "userspace"} {
			sets := []string{"spec.cluster.proxyMode=" + mode}
			if app.mean != "" {
				sets = append(sets, "spec.services[0].pod.serviceTime.mean="+app.mean)
			}
			runs = append(runs, run{r2PodsFile, sets})
		}
	}
	return l.results(runs...)
}

func r2UserspaceTable(l *lab) (string, error) {
	rs, err := r2UserspaceRuns(l)
	if err != nil {
		return "", err
	}
	b := &strings.Builder{}
	fmt.Fprintf(b, "\n| app CPU a request | iptables | userspace | kube-proxy's CPU on worker-0 | userspace takes (%s) |\n|---|---|---|---|---|\n", ranWith(rs[0]))
	last := 0.0
	for i, app := range r2AppCosts {
		ipt, us := rs[2*i], rs[2*i+1]
		proxy := 0.0
		for _, n := range us.Nodes {
			if n.Name == "worker-0" {
				proxy = n.ProxyCPUCores
			} else if n.ProxyCPUCores > 0 {
				return "", claim("the relay runs on worker-0, the entry node", "%s relayed %v cores", n.Name, n.ProxyCPUCores)
			}
		}
		ratio := ipt.ThroughputRPS / us.ThroughputRPS
		if app.mean == "500us" && ratio >= r2Userspace || app.mean == "200us" && ratio <= r2Userspace {
			return "", claim("R2's 2.7× lies between the 0.5 ms and 0.2 ms rows", "%s gives %.2f×", app.label, ratio)
		}
		if ratio <= last {
			return "", claim("the lighter the app, the more the relay's CPU costs", "%s gives %.2f×, after %.2f×", app.label, ratio, last)
		}
		last = ratio
		fmt.Fprintf(b, "| %s | %s rps | %s rps | %.2f cores | %.2f× as long |\n", app.label, whole(ipt.ThroughputRPS), whole(us.ThroughputRPS), proxy, ratio)
	}
	return b.String(), nil
}

// r2Userspace is how much longer R2's fixed load took in userspace mode.
const r2Userspace = 2.7

// R5: vegeta's own CPU, and what it sends when that CPU is limited.
const r5Limited = "spec.clients[0].resources.limits.cpu=500m"

func r5ClientCPU(l *lab) (string, error) {
	rs, err := r5Runs(l)
	if err != nil {
		return "", err
	}
	c, err := clientCPU(rs[1], r5File)
	if err != nil {
		return "", err
	}
	// R5's 5-CPU run: 15.4 cores for 1,298,177 requests in 300 s.
	if r5 := 15.4 * 300 / 1298177 * 1e3; r5 < 30*c.CPUPerRequestMS {
		return "", claim("R5's 3.6 ms a request is over thirty times what vegeta spends here", "here %.3f ms", c.CPUPerRequestMS)
	}
	return fmt.Sprintf("%.2f cores, %.3f ms a request", c.CPUCores, c.CPUPerRequestMS), nil
}

func r5LimitedSent(l *lab) (string, error) {
	r, err := l.result(r5File, r5Short, r5Limited)
	if err != nil {
		return "", err
	}
	c, err := clientCPU(r, r5File)
	if err != nil {
		return "", err
	}
	if c.Behind == 0 {
		return "", claim("limited to 0.5 CPU, vegeta falls behind", "it sent all %d", c.Sent)
	}
	due := c.Sent + c.Behind
	share := float64(c.Sent) / float64(due)
	// What it sends goes as 1/cost. Each request here costs vegeta 31.3 µs and a
	// connection 66.9 µs; cmd/cpucost's repetitions spread about ±9.4 % on the first
	// (35.9–43.4 µs at 8,000/s) and ±1.3 % on the second: ±3.8 µs of 98.2, ±4 %.
	lo, hi := share/1.04, share/0.96
	where := "within it"
	switch {
	case r5SentShare < lo:
		where = "below it"
	case r5SentShare > hi:
		where = "above it"
	}
	return fmt.Sprintf("it sends %s of the %s requests due (%s), %.3f ms of CPU a request; the spread of the measured costs (±4 %%) "+
		"makes that %s to %s, and R5's %s lies %s", count(c.Sent), count(due), pct(share, 0), c.CPUPerRequestMS,
		pct(lo, 0), pct(hi, 0), pct(r5SentShare, 0), where), nil
}

// r5SentShare is what R5's vegeta sent of its schedule with sidecars on both sides.
const r5SentShare = 1344429.0 / 3000000

// The CPU figures the prose quotes, from the models that use them.

func r1DotnetCost(*lab) (string, error) { return libraryCost("dotnet-httpclient") }

func r5VegetaCost(*lab) (string, error) { return libraryCost("vegeta") }

func r2RelayCost(*lab) (string, error) {
	conn, req, _ := kubeproxy.Userspace.RelayCPU()
	return fmt.Sprintf("%s a connection and %s a request and answer", micros(conn), micros(req)), nil
}

// libraryCost is a library profile's CPU, as the prose quotes it.
func libraryCost(name string) (string, error) {
	p, ok := library.Lookup(name)
	if !ok || p.RequestCPU == 0 {
		return "", fmt.Errorf("library %s has no CPU figure", name)
	}
	out := micros(p.RequestCPU) + " a request"
	if p.ConnectionCPU > 0 {
		out += " and " + micros(p.ConnectionCPU) + " a connection"
	}
	if p.SteadyMilliCPU > 0 {
		out += fmt.Sprintf(", and %d millicores all along (its pacer and timers)", p.SteadyMilliCPU)
	}
	return out, nil
}
