package report

import (
	"fmt"
	"strings"

	"trafficlab/result"
)

// seesInsidePods says whether r's engine follows each request inside the pods, as
// simulate does: which pod's removal failed it, where it waited. The engines that
// run for real (emulate, cluster) measure from the clients' side: a refused
// connection does not say which pod the rules sent it to, nor an answer where it
// waited.
func seesInsidePods(r *result.Result) bool { return r.Engine == "simulate" }

// removalWindow is when a removed pod was going: from its deletion to a second
// after it ended (or the run's end), the time kube-proxy's rules may still send
// connections to it.
type removalWindow struct {
	pod        string
	start, end float64
}

// removalWindows are the run's removed pods' windows.
func removalWindows(r *result.Result) []removalWindow {
	var out []removalWindow
	for _, p := range r.Pods {
		if p.DeletedS == nil {
			continue
		}
		end := r.DurationS
		if p.EndS != nil {
			end = min(*p.EndS+1, r.DurationS)
		}
		out = append(out, removalWindow{p.Name, *p.DeletedS, end})
	}
	return out
}

// writeUntraced is the errors' section of a run whose engine does not trace them
// to pods: how many failed in the timeline's intervals while pods were being
// removed, and how many during faults, without saying any caused them.
func writeUntraced(b *strings.Builder, r *result.Result) {
	windows := removalWindows(r)
	step := r.TimelineIntervalS
	var during result.Errors
	for _, pt := range r.Timeline {
		if pt.ErrorsByKind == nil {
			continue
		}
		for _, w := range windows {
			if pt.TS < w.end && pt.TS+step > w.start {
				during.AddAll(*pt.ErrorsByKind)
				break
			}
		}
	}
	failures, _ := failedAttempts(r)
	fmt.Fprintf(b, "\nWhere the errors came from: %s\n", plural(failures.Total(), "failed request"))
	if len(windows) > 0 {
		spans := make([]string, len(windows))
		for i, w := range windows {
			spans[i] = fmt.Sprintf("%s %s–%s", w.pod, at(w.start), at(w.end))
		}
		removing := "while pods were being removed (from their deletion to a second after they ended: " + strings.Join(spans, ", ") + ")"
		line := "none came " + removing + "."
		if during.Total() > 0 {
			line = "came " + removing + ": " + joinAnd(kinds(during)) + ". The " + r.Engine + " engine sees failures from the clients' " +
				"side and does not trace one to a pod, so it cannot say which removal caused them."
		}
		fmt.Fprintf(b, "%s\n", indentWrap(line, "  - ", "    "))
	}
	for _, fe := range duringFaults(r) {
		fmt.Fprintf(b, "%s\n", indentWrap(faultLine(r, fe), "  - ", "    "))
	}
}
