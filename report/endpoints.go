package report

import (
	"fmt"
	"strings"

	"trafficlab/result"
)

// writeNoEndpoints explains the connections refused while a service had no ready
// endpoint, when no other section does (the errors explanation names such spans
// among the errors no pod caused): kube-proxy installs a REJECT rule for the
// ClusterIP of a Service without endpoints (pkg/proxy/iptables/proxier.go,
// "has no endpoints"), so every new connection is refused at once. A headless
// Service's name does not resolve then: CoreDNS answers NXDOMAIN.
func writeNoEndpoints(b *strings.Builder, r *result.Result) {
	if attributes(r) {
		return
	}
	var failed [2]int64 // ClusterIP, headless
	var each [2][]string
	for _, svc := range services(r) {
		spans, whole, n := emptySpans(r, svc)
		if len(spans) == 0 || n == 0 {
			continue
		}
		k := 0
		if isHeadless(r, svc) {
			k = 1
		}
		failed[k] += n
		if whole {
			each[k] = append(each[k], svc+" had none for the whole run"+whyEmpty(r, svc))
		} else {
			each[k] = append(each[k], svc+" had none "+strings.Join(spans, ", "))
		}
	}
	if len(each[0]) > 0 {
		fmt.Fprintf(b, "\n%s\n", wrap(fmt.Sprintf("No ready endpoint: %s. While a Service has no ready endpoint, "+
			"kube-proxy REJECTs new connections to its ClusterIP, so the client sees each one refused at once: %s "+
			"were refused meanwhile.", joinAnd(each[0]), plural(failed[0], "connection")), width))
	}
	if len(each[1]) > 0 {
		fmt.Fprintf(b, "\n%s\n", wrap(fmt.Sprintf("No ready pod: %s. While a headless Service has no ready pod, "+
			"cluster DNS answers its name NXDOMAIN, so each new connection fails at once, no such host: %s "+
			"failed so meanwhile.", joinAnd(each[1]), plural(failed[1], "connection")), width))
	}
}

// emptySpans are the spans of the timeline in which svc had no ready endpoint, as
// "12s–15s", whether they cover the whole run, and the connections that failed
// for it in them: refused, or for a headless Service not resolved.
func emptySpans(r *result.Result, svc string) (spans []string, whole bool, refused int64) {
	step := r.TimelineIntervalS
	if step <= 0 {
		return nil, false, 0
	}
	start, all := -1.0, len(r.Timeline) > 0
	for i, pt := range r.Timeline {
		n, ok := pt.ReadyEndpoints[svc]
		empty := ok && n == 0
		all = all && empty
		if empty && pt.ErrorsByKind != nil {
			refused += pt.ErrorsByKind.ConnectionRefused + pt.ErrorsByKind.NoSuchHost
		}
		if empty && start < 0 {
			start = pt.TS
		}
		if last := i == len(r.Timeline)-1; start >= 0 && (!empty || last) {
			end := pt.TS
			if empty {
				end = min(pt.TS+step, max(r.DurationS, pt.TS))
			}
			spans = append(spans, at(start)+"–"+at(end))
			start = -1
		}
	}
	if len(spans) > 4 {
		spans = append(spans[:3], fmt.Sprintf("and %d more spans", len(spans)-3))
	}
	return spans, all, refused
}

// whyEmpty says why a service had no endpoint all run: no replicas asked for, its
// pods never placed, or never ready.
func whyEmpty(r *result.Result, svc string) string {
	for _, s := range r.Services {
		if s.Name == svc && s.Replicas == 0 {
			return " (spec.replicas is 0: give it replicas)"
		}
	}
	for _, p := range r.Pending {
		if p.Service == svc {
			return " (its pods never got a node: see Pending)"
		}
	}
	if n := len(podsOf(r, svc)); n > 0 {
		return fmt.Sprintf(" (none of its %s became ready)", plural(int64(n), "pod"))
	}
	return ""
}
