package report

import (
	"fmt"

	"trafficlab/result"
)

// faultErrors are the failed requests that ended while a network fault lasted, or
// within the clients' timeout after it (a request sent just before the end can wait
// that long), by fault; a timeline interval counts for the first fault it overlaps.
type faultErrors struct {
	fault  result.Fault
	errors result.Errors
}

// duringFaults sums the timeline's errors over each network fault's window.
func duringFaults(r *result.Result) []faultErrors {
	step := r.TimelineIntervalS
	if step <= 0 || len(r.Faults) == 0 {
		return nil
	}
	timeout := clientTimeout(r)
	var out []faultErrors
	taken := make([]bool, len(r.Timeline))
	for _, f := range r.Faults {
		if f.Kind == "pod-kill" { // its errors are the removed pod's
			continue
		}
		fe := faultErrors{fault: f}
		for i, pt := range r.Timeline {
			if taken[i] || pt.ErrorsByKind == nil || pt.TS >= f.EndS+timeout || pt.TS+step <= f.StartS {
				continue
			}
			taken[i] = true
			fe.errors.AddAll(*pt.ErrorsByKind)
		}
		if fe.errors.Total() > 0 {
			out = append(out, fe)
		}
	}
	return out
}

// faultLine names a fault, its window and the errors in it, and how such a fault
// makes requests fail.
func faultLine(r *result.Result, fe faultErrors) string {
	f := fe.fault
	name := "the " + f.Kind + " fault"
	if f.Name != "" {
		name += " " + f.Name
	}
	name += " on " + f.Target
	if f.Peer != "" {
		name += " and " + f.Peer
	}
	switch f.Direction {
	case "both":
		name += " (both ways)"
	case "to":
		name += " (packets it sends)"
	case "from":
		name += " (packets it receives)"
	}
	after := "while it lasted"
	if t := clientTimeout(r); t > 0 {
		after = fmt.Sprintf("while it lasted or within the clients' %s timeout after", at(t))
	}
	s := fmt.Sprintf("%s, %s–%s: %s %s.", name, at(f.StartS), at(f.EndS), joinAnd(kinds(fe.errors)), after)
	switch f.Kind {
	case "partition":
		s += " A partition drops every packet: "
		if r.TCP != nil && r.TCP.SynRetransmits > 0 {
			s += "connections to the target could not be opened (their SYNs went unanswered) and "
		}
		s += "requests on the connections to it got no answer"
		if fe.errors.Timeout > 0 {
			s += ", so the clients waited until their timeout"
		}
		s += "."
	case "loss":
		s += " Lost packets wait for a retransmission (a SYN 1 s, then doubling; data at least the 200 ms " +
			"minimum RTO when too little is in flight for duplicate ACKs): requests whose repairs outlasted the " +
			"timeout failed."
	case "delay", "bandwidth":
		s += " Every exchange with the target took longer: requests that outlasted the clients' timeout failed."
	}
	return s
}

// clientTimeout is the longest timeout of the run's clients; 0 when not recorded.
func clientTimeout(r *result.Result) float64 {
	t := 0.0
	for _, c := range r.Clients {
		t = max(t, c.TimeoutS)
	}
	return t
}

// killedBy is the pod-kill fault that deleted pod p, or nil.
func killedBy(r *result.Result, p result.Pod) *result.Fault {
	if p.DeletedS == nil {
		return nil
	}
	for i, f := range r.Faults {
		if f.Kind == "pod-kill" && *p.DeletedS == f.StartS &&
			(f.Target == "pod "+p.Name || f.Target == "service "+p.Service || f.Target == "node "+p.Node) {
			return &r.Faults[i]
		}
	}
	return nil
}
