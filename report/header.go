package report

import (
	"fmt"
	"strings"

	"trafficlab/result"
)

// ranScenario is true for the engines that run a scenario in a cluster, simulate,
// emulate and cluster: only they have a seed, a kube-proxy and pods whose nodes and CPU they
// measured. trafficlab load knows the pods that answered it, by name; an imported
// vegeta attack knows only its requests.
func ranScenario(r *result.Result) bool {
	return r.Engine == "simulate" || r.Engine == "emulate" || r.Engine == "cluster"
}

// scenarioName is the scenario r ran, or says that it ran none, as a load
// generator's run: "no scenario (vegeta)".
func scenarioName(r *result.Result) string {
	if r.Scenario == "" && !ranScenario(r) {
		return "no scenario (" + r.Engine + ")"
	}
	return r.Scenario
}

// seedOf is the header's "seed N", "" for an engine that has no seed.
func seedOf(r *result.Result) string {
	if !ranScenario(r) {
		return ""
	}
	return fmt.Sprintf("seed %d", r.Seed)
}

// kubeProxy is the header's "kube-proxy MODE", with the IPVS scheduler when asked
// for; "" when the Result has no mode (an engine that ran no cluster).
func kubeProxy(r *result.Result, scheduler bool) string {
	if r.ProxyMode.IsZero() {
		return ""
	}
	mode := "kube-proxy " + r.ProxyMode.String()
	if scheduler && r.IPVSScheduler != "" {
		mode += " " + r.IPVSScheduler
	}
	return mode
}

// joinKnown joins a header's parts with " · ", leaving out the empty ones: what
// the engine did not know.
func joinKnown(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, " · ")
}

// originLine is the line under a single run's header that says what it was asked
// to run: "examples/r1.yaml --set spec.duration=10s --seed 3", as compare's rows
// show it; "" when the Result did not record it.
func originLine(r *result.Result) string {
	o := r.Origin
	if o == nil {
		return ""
	}
	file := o.File
	if file == "" {
		file = "the built-in example"
	}
	s := "Ran " + file
	if args := commandLine(o); args != "none" {
		s += " with " + args
	}
	return s
}
