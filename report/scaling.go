package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"trafficlab/result"
)

// Long lists (scale events, runs, pods with errors) show their first and last few.
const (
	listMax  = 20 // show every item up to this many
	listKeep = 5  // else this many at each end
)

// width is the text report's line budget for the sections written here.
const width = 108

// shown returns the indexes of a list of n items to print; omitted > 0 means a
// marker goes after the first listKeep of them.
func shown(n int) (idx []int, omitted int) {
	if n <= listMax {
		for i := 0; i < n; i++ {
			idx = append(idx, i)
		}
		return idx, 0
	}
	for i := 0; i < listKeep; i++ {
		idx = append(idx, i)
	}
	for i := n - listKeep; i < n; i++ {
		idx = append(idx, i)
	}
	return idx, n - 2*listKeep
}

// hasLifecycle is true when pods came and went during the run, or a pod's removal
// caused errors: the pods table then shows each pod's life and errors.
func hasLifecycle(r *result.Result) bool {
	for _, p := range r.Pods {
		if p.StartS > 0 || p.DeletedS != nil || p.EndS != nil || p.Errors.Total() > 0 {
			return true
		}
	}
	return false
}

func podsAtEnd(pods []result.Pod) int {
	n := 0
	for _, p := range pods {
		if p.DeletedS == nil && p.EndS == nil {
			n++
		}
	}
	return n
}

// at formats an instant of the run in seconds, to a tenth: 0s, 22s, 80.5s.
func at(s float64) string {
	s = math.Round(s*10) / 10
	if s == math.Trunc(s) {
		return fmt.Sprintf("%.0fs", s)
	}
	return fmt.Sprintf("%.1fs", s)
}

// lifeSpan is created–ended; an open end for a pod still running, and "deleting"
// for one whose deletion began but whose process had not ended.
func lifeSpan(p result.Pod) string {
	switch {
	case p.EndS != nil:
		return at(p.StartS) + "–" + at(*p.EndS)
	case p.DeletedS != nil:
		return at(p.StartS) + "–(deleting)"
	}
	return at(p.StartS) + "–"
}

func readyAt(p result.Pod) string {
	if p.ReadyS == nil {
		return "never"
	}
	return at(*p.ReadyS)
}

func writeRuns(b *strings.Builder, r *result.Result) {
	for _, c := range r.Clients {
		if len(c.Runs) == 0 && c.RunsAborted == 0 {
			continue
		}
		fmt.Fprintf(b, "\nRuns of %s: %d\n", c.Name, len(c.Runs))
		idx, omitted := shown(len(c.Runs))
		decimals := 1 // starts to a tenth of a second, unless that makes two alike
		for k := 1; k < len(idx); k++ {
			a, z := c.Runs[idx[k-1]].StartS, c.Runs[idx[k]].StartS
			if math.Round(a*10) == math.Round(z*10) {
				decimals = 3
			}
		}
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "#\tNAME\tSTART\tDURATION\tREQUESTS\tERRORS\tABORTED\t\n")
		for k, i := range idx {
			if omitted > 0 && k == listKeep {
				fmt.Fprintf(tw, "…\t%s omitted\t\t\t\t\t\t\n", plural(int64(omitted), "run"))
			}
			run := c.Runs[i]
			name := run.Name
			if name == "" {
				name = fmt.Sprintf("phase %d", run.Phase)
			}
			aborted := "no"
			if run.Aborted {
				aborted = "yes"
			}
			fmt.Fprintf(tw, "%d\t%s\t%.*fs\t%s\t%d\t%d\t%s\t\n", i+1, name, decimals, run.StartS,
				ms(1000*(run.EndS-run.StartS)), run.Requests, run.Errors, aborted)
		}
		tw.Flush()
		if c.RunsAborted > 0 {
			tool := c.Name
			if c.Library != "" {
				tool = c.Library
			}
			runs := plural(c.RunsAborted, "run")
			if len(c.Runs) > 0 {
				runs = fmt.Sprintf("%d of %s", c.RunsAborted, plural(int64(len(c.Runs)), "run"))
			}
			line := fmt.Sprintf("%s aborted %s at a receive error", tool, runs)
			if c.Library == "ab" {
				line += "; without -r, ab exits at its first socket receive error and the rest of that run is never sent"
			}
			fmt.Fprintf(b, "%s.\n", wrap(line, width))
		}
	}
}

func writeScaleEvents(b *strings.Builder, r *result.Result) {
	evs := r.ScaleEvents
	if len(evs) == 0 {
		return
	}
	out, in := 0, 0
	for _, ev := range evs {
		if ev.To > ev.From {
			out++
		} else if ev.To < ev.From {
			in++
		}
	}
	fmt.Fprintf(b, "\nScale events: %d (%d out, %d in)\n", len(evs), out, in)
	idx, omitted := shown(len(evs))
	rows := [][]string{{"TIME", "SERVICE", "REPLICAS", "PODS", "REASON"}}
	for k, i := range idx {
		if omitted > 0 && k == listKeep {
			rows = append(rows, []string{"…", "", "", "", plural(int64(omitted), "event") + " omitted"})
		}
		ev := evs[i]
		rows = append(rows, []string{at(ev.TS), ev.Service, fmt.Sprintf("%d→%d", ev.From, ev.To), podChange(ev.Created, ev.Deleted), ev.Reason})
	}
	// The first four columns are aligned; the reason takes the rest of the line and
	// wraps under itself.
	w := make([]int, 4)
	for _, row := range rows {
		for c := 0; c < 4; c++ {
			w[c] = max(w[c], utf8.RuneCountInString(row[c]))
		}
	}
	indent := 2 + w[0] + 2 + w[1] + 2 + w[2] + 2 + w[3] + 2
	for _, row := range rows {
		left := fmt.Sprintf("  %s  %s  %s  %s  ", pad(row[0], w[0], true), pad(row[1], w[1], false),
			pad(row[2], w[2], false), pad(row[3], w[3], false))
		lines := strings.Split(wrap(row[4], max(30, width-indent)), "\n")
		fmt.Fprintf(b, "%s%s\n", left, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(b, "%s%s\n", strings.Repeat(" ", indent), l)
		}
	}
}

// writeRollouts lists the Deployments' rollouts: how long each took and which pods
// it replaced.
func writeRollouts(b *strings.Builder, r *result.Result) {
	if len(r.Rollouts) == 0 {
		return
	}
	fmt.Fprintf(b, "\nRollouts: %d\n", len(r.Rollouts))
	for _, ro := range r.Rollouts {
		took := "not finished at the end"
		if ro.DoneS != nil {
			took = "done at " + at(*ro.DoneS)
		}
		line := fmt.Sprintf("%s %s, %s (%s): %s", at(ro.StartS), ro.Service, ro.Strategy, took,
			podChange(ro.Created, ro.Deleted))
		fmt.Fprintf(b, "%s\n", indentWrap(line, "  ", "    "))
		for _, why := range firstSeen(ro.Unschedulable) {
			fmt.Fprintf(b, "%s\n", indentWrap("waited Pending: "+why, "    ", "      "))
		}
	}
}

// writePending lists the pods no node could take by the end, with the scheduler's
// reason.
func writePending(b *strings.Builder, r *result.Result) {
	if len(r.Pending) == 0 {
		return
	}
	fmt.Fprintf(b, "\nPending at the end: %s no node could take\n", plural(int64(len(r.Pending)), "pod"))
	idx, omitted := shown(len(r.Pending))
	for k, i := range idx {
		if omitted > 0 && k == listKeep {
			fmt.Fprintf(b, "  … %s omitted\n", plural(int64(omitted), "more pod"))
		}
		p := r.Pending[i]
		fmt.Fprintf(b, "%s\n", indentWrap(fmt.Sprintf("%s, since %s: %s", p.Name, at(p.SinceS), p.Reason), "  - ", "    "))
	}
}

// firstSeen is ss without repeats, in first-seen order.
func firstSeen(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// rolledOutBy is the rollout that deleted pod p, or nil.
func rolledOutBy(r *result.Result, p result.Pod) *result.Rollout {
	for i := range r.Rollouts {
		if ro := &r.Rollouts[i]; ro.Service == p.Service && slices.Contains(ro.Deleted, p.Name) {
			return ro
		}
	}
	return nil
}

func pad(s string, w int, right bool) string {
	fill := strings.Repeat(" ", max(0, w-utf8.RuneCountInString(s)))
	if right {
		return fill + s
	}
	return s + fill
}

// podChange names the pods a scale event or rollout created (+) or deleted (−), or
// counts them when there are more than three, naming the first two: a scale-in picks
// pods in no order of their names, so a first and a last would read as a range.
func podChange(created, deleted []string) string {
	names := func(sign string, ps []string) string {
		if len(ps) > 3 {
			return fmt.Sprintf("%s%d pods (%s, %s and %d more)", sign, len(ps), ps[0], ps[1], len(ps)-2)
		}
		return sign + strings.Join(ps, " "+sign)
	}
	var parts []string
	if len(created) > 0 {
		parts = append(parts, names("+", created))
	}
	if len(deleted) > 0 {
		parts = append(parts, names("−", deleted))
	}
	return strings.Join(parts, " ")
}

// deletedBy is the scale event whose deletions name pod, or nil.
func deletedBy(r *result.Result, p result.Pod) *result.ScaleEvent {
	for i := range r.ScaleEvents {
		ev := &r.ScaleEvents[i]
		if ev.Service != p.Service {
			continue
		}
		for _, name := range ev.Deleted {
			if name == p.Name {
				return ev
			}
		}
	}
	return nil
}

// kinds lists the non-zero counts of e in a fixed order, as "19 connections refused".
func kinds(e result.Errors) []string {
	var out []string
	if e.ConnectionRefused > 0 {
		out = append(out, plural(e.ConnectionRefused, "connection")+" refused")
	}
	if e.ConnectionReset > 0 {
		out = append(out, plural(e.ConnectionReset, "connection")+" reset")
	}
	if e.ConnectionClosed > 0 {
		out = append(out, plural(e.ConnectionClosed, "connection")+" closed before the answer")
	}
	if e.Timeout > 0 {
		out = append(out, plural(e.Timeout, "timeout"))
	}
	if e.HTTP503 > 0 {
		out = append(out, plural(e.HTTP503, "request")+" "+result.ErrorHTTP503.Words())
	}
	if e.NoSuchHost > 0 {
		out = append(out, plural(e.NoSuchHost, "request")+" "+result.ErrorNoSuchHost.Words())
	}
	return out
}

// writeAttribution says which pod's removal caused which failed requests, by which
// scale event, by what mechanism, and what avoids it; and which errors no pod caused.
func writeAttribution(b *strings.Builder, r *result.Result) {
	if !seesInsidePods(r) {
		if removedAny(r) && r.Errors.Total() > 0 || len(duringFaults(r)) > 0 {
			writeUntraced(b, r)
		}
		return
	}
	var culprits []result.Pod
	var blamed result.Errors
	for _, p := range r.Pods {
		if p.Errors.Total() > 0 {
			culprits = append(culprits, p)
			blamed.AddAll(p.Errors)
		}
	}
	faults := duringFaults(r)
	var inFaults result.Errors
	for _, fe := range faults {
		inFaults.AddAll(fe.errors)
	}
	if !attributes(r) {
		return
	}
	failures, byCalls := failedAttempts(r)
	writeAttributionHead(b, r, failures.Total(), blamed.Total(), inFaults.Total(), len(culprits) > 0, len(faults) > 0)
	idx, omitted := shown(len(culprits))
	for k, i := range idx {
		if omitted > 0 && k == listKeep {
			fmt.Fprintf(b, "  … %s omitted\n", plural(int64(omitted), "more pod"))
		}
		p := culprits[i]
		fmt.Fprintf(b, "%s\n", indentWrap(blame(r, p)+": "+strings.Join(kinds(p.Errors), ", ")+".", "  - ", "    "))
	}
	for _, fe := range faults {
		fmt.Fprintf(b, "%s\n", indentWrap(faultLine(r, fe), "  - ", "    "))
	}
	if byCalls > 0 {
		fmt.Fprintf(b, "%s\n", indentWrap(fmt.Sprintf("answered 503 by a service because a call it made failed: %d (see Calls above).", byCalls), "  - ", "    "))
	}
	known := blamed
	known.AddAll(inFaults)
	known.Add(result.ErrorHTTP503, byCalls)
	var rest result.Errors
	for k := range result.ErrorKinds {
		rest.Add(k, max(0, failures.Of(k)-known.Of(k)))
	}
	nobody := "not attributed to any pod: "
	if len(faults) > 0 {
		nobody = "not attributed to any pod or fault: "
	}
	if rest.Total() > 0 {
		fmt.Fprintf(b, "%s\n", indentWrap(nobody+strings.Join(kinds(rest), ", ")+
			". "+unattributed(r, rest), "  - ", "    "))
	}
	if len(culprits) > 0 {
		fmt.Fprintf(b, "How:\n")
		cfg, killed := shutdownOf(r, culprits), true
		for _, p := range culprits {
			killed = killed && killedBy(r, p) != nil
		}
		for _, why := range mechanisms(r, cfg, killed, blamed) {
			fmt.Fprintf(b, "%s\n", indentWrap(why, "  - ", "    "))
		}
		fix := avoid(cfg, blamed)
		if killed {
			fix = "Avoid it: nothing in the pods' shutdown can: a pod-kill deletes the pod with a grace period of 0, " +
				"so neither preStop nor SIGTERM runs. Only clients that retry on a new connection ride it out."
		}
		if fix != "" {
			fmt.Fprintf(b, "%s\n", wrap(fix, width))
		}
	}
	if r.Requests.Retried > 0 {
		fmt.Fprintf(b, "%s\n", wrap(fmt.Sprintf("Not counted as errors: the client library resent %s on a new connection "+
			"after the reused one failed under them; the callers saw only the delay.", plural(r.Requests.Retried, "request")), width))
	}
}

// writeAttributionHead is the section's first line: how many of the total failures
// removed pods caused (blamed) and how many came during faults.
func writeAttributionHead(b *strings.Builder, r *result.Result, total, blamed, inFaults int64, culprits, faults bool) {
	what := plural(total, "failed request")
	if len(r.Edges) > 0 {
		what = plural(total, "failed attempt") + " (the clients' requests and the services' calls)"
	}
	if !culprits && faults {
		fmt.Fprintf(b, "\nWhere the errors came from: %d of %s during faults\n", inFaults, what)
		return
	}
	if blamed == 0 {
		fmt.Fprintf(b, "\nWhere the errors came from: none of the %s was caused by a pod's removal", what)
	} else {
		fmt.Fprintf(b, "\nWhere the errors came from: %d of %s caused by pods being removed", blamed, what)
	}
	if faults {
		fmt.Fprintf(b, ", %d during faults", inFaults)
	}
	fmt.Fprintf(b, "\n")
}

// failedAttempts are the failures a pod's removal can have caused: the clients'
// failed requests and, when services call services, every failed call attempt;
// byCalls of them are 503s services answered because a call they made failed.
func failedAttempts(r *result.Result) (failures result.Errors, byCalls int64) {
	failures = r.Errors
	for _, e := range r.Edges {
		failures.AddAll(e.AttemptErrors)
	}
	for _, s := range r.Services {
		byCalls += s.Errors
	}
	return failures, byCalls
}

// attributes says whether writeAttribution has anything to say: errors a removed pod
// caused, errors during a fault, or errors in a run whose pods were scaled.
func attributes(r *result.Result) bool {
	for _, p := range r.Pods {
		if p.Errors.Total() > 0 {
			return true
		}
	}
	// With no pod to blame, the section is still the answer to "did the pods that
	// went cause the errors?", a question only a run that removed pods raises.
	return len(duringFaults(r)) > 0 || (removedAny(r) && r.Errors.Total() > 0)
}

// removedAny says whether any pod was deleted during the run (a scale-in, a
// rollout, a pod-kill).
func removedAny(r *result.Result) bool {
	for _, p := range r.Pods {
		if p.DeletedS != nil {
			return true
		}
	}
	return false
}

// blame names the pod and what removed it: "web-1, deleted at 80s by the scale-in 3→2".
func blame(r *result.Result, p result.Pod) string {
	s := p.Name
	ro := rolledOutBy(r, p)
	switch ev := deletedBy(r, p); {
	case ev != nil:
		dir := "scale-in"
		if ev.To > ev.From {
			dir = "scale-out" // cannot delete pods, but say what the event was
		}
		when := ev.TS
		if p.DeletedS != nil {
			when = *p.DeletedS
		}
		s += fmt.Sprintf(", deleted at %s by the %s %d→%d", at(when), dir, ev.From, ev.To)
		if when != ev.TS {
			s += " of " + at(ev.TS)
		}
	case ro != nil:
		s += fmt.Sprintf(", deleted at %s by the rollout of %s", at(*p.DeletedS), at(ro.StartS))
	case killedBy(r, p) != nil:
		f := killedBy(r, p)
		s += fmt.Sprintf(", deleted at %s by the pod-kill fault", at(*p.DeletedS))
		if f.Name != "" {
			s += " " + f.Name
		}
	case p.DeletedS != nil:
		s += fmt.Sprintf(", deleted at %s (not by the autoscaler)", at(*p.DeletedS))
	case p.EndS != nil:
		s += ", which exited"
	default:
		s += ", still running at the end,"
	}
	if p.EndS != nil && (p.DeletedS == nil || math.Abs(*p.EndS-*p.DeletedS) >= 0.05) {
		s += fmt.Sprintf(", its process ending at %s", at(*p.EndS))
	}
	return s
}

// shutdownOf is how the removed pods were configured to end: their service's
// settings when they all belong to one service the result describes, else nil.
func shutdownOf(r *result.Result, culprits []result.Pod) *result.Service {
	var cfg *result.Service
	for _, p := range culprits {
		var own *result.Service
		for i := range r.Services {
			if r.Services[i].Name == p.Service {
				own = &r.Services[i]
			}
		}
		if own == nil || (cfg != nil && own != cfg) {
			return nil
		}
		cfg = own
	}
	return cfg
}

// drains says whether the pods drain on SIGTERM.
func drains(cfg *result.Service) bool { return cfg != nil && cfg.OnSigterm == "drain" }

// mechanisms explains, one sentence per kind present, how a removed pod causes it,
// as the pods were configured to end (cfg; nil when the result does not say), or
// as a pod-kill ended them (killed).
func mechanisms(r *result.Result, cfg *result.Service, killed bool, e result.Errors) []string {
	mode := r.ProxyMode
	stopped := "after its process exited on SIGTERM"
	switch {
	case killed:
		stopped = "after a pod-kill ended its process at once"
		cfg = nil // it never ran its shutdown
	case drains(cfg):
		stopped = "after it closed its listener on SIGTERM to drain"
	}
	var out []string
	if e.ConnectionRefused > 0 {
		s := "refused: new connections were still sent to the pod " + stopped + ". " +
			"Each node's kube-proxy drops a pod from its rules only once the EndpointSlice change reaches it " +
			"and its next sync runs (minSyncPeriod), and the first pick is never retried, so connections " +
			"chosen before then reached a pod that no longer listened."
		if len(mode.DialTimeouts()) > 0 {
			s = "refused: new connections reached the pod " + stopped + ", and the " +
				mode.String() + " proxy's retries of other endpoints did not save them."
		}
		out = append(out, s)
	}
	if e.ConnectionReset > 0 {
		s := "reset: requests were sent on kept-alive connections that the exited pod no longer had, " +
			"or were still unread in its socket when it exited, and its kernel answered with a reset. " +
			"Removing an endpoint does not move established connections; they stay pinned to the old pod."
		if drains(cfg) {
			s = "reset: requests were sent on kept-alive connections as the draining pod closed them as idle, " +
				"or reached it after its process ended, and its kernel answered with a reset. " +
				"Removing an endpoint does not move established connections; they stay pinned to the old pod."
		}
		out = append(out, s)
	}
	if e.ConnectionClosed > 0 {
		s := "closed: requests were in progress when the pod's process exited, and the client read EOF " +
			"before any answer."
		if drains(cfg) {
			s = "closed: requests were still in progress when the drain was cut short (" + drainCut(cfg) +
				") and the process ended, and the client read EOF before any answer."
		}
		if mode.Relays() {
			s += " With the " + mode.String() + " proxy, resets from the pod also show this way: the proxy holds the " +
				"client's connection and closes it when its own connection to the pod fails."
		}
		out = append(out, s)
	}
	if e.Timeout > 0 {
		out = append(out, "timeout: connections were sent to the pod's IP after the pod was gone and its IP released; "+
			"nothing answered or refused them, so the client waited until its timeout.")
	}
	return out
}

// drainCut names what ends a drain that has not finished: the drain timeout or
// SIGKILL at the end of the grace period, with their values.
func drainCut(cfg *result.Service) string {
	kill := fmt.Sprintf("SIGKILL at the end of the %s grace period", readableS(cfg.TerminationGracePeriodS))
	if cfg.DrainTimeoutS > 0 {
		return fmt.Sprintf("the app's %s drain timeout, or %s", readableS(cfg.DrainTimeoutS), kill)
	}
	return kill
}

// The remedies for removed pods' errors (Kubernetes' "Pod termination" and
// kube-proxy's minSyncPeriod).
const (
	preStopSleep = "a preStop sleep longer than the endpoint propagation plus kube-proxy's minSyncPeriod " +
		"(5–15 s is common) keeps the pod serving until every node has stopped sending it new connections"
	drainOnSigterm = "draining on SIGTERM (finish the requests in progress, answer with Connection: close or " +
		"HTTP/2 GOAWAY, close idle keep-alive connections, then exit) ends its connections cleanly"
)

// avoid is the remedy for the kinds in e, from what the pods were configured to do
// (cfg; nil when the result does not say, and then the standard remedy): it
// advises nothing they already do, and what to change in what they do.
func avoid(cfg *result.Service, e result.Errors) string {
	early := e.ConnectionRefused+e.Timeout > 0
	cut := e.ConnectionReset+e.ConnectionClosed > 0
	if cfg == nil {
		switch {
		case early && cut:
			return "Avoid it: " + preStopSleep + "; " + drainOnSigterm + ". terminationGracePeriodSeconds must cover both."
		case early:
			return "Avoid it: " + preStopSleep + ", and draining on SIGTERM closes its connections cleanly after that."
		case cut:
			return "Avoid it: " + drainOnSigterm + ", after a preStop sleep so that no new connections arrive meanwhile."
		}
		return ""
	}
	var do []string
	if early {
		if cfg.PreStopS > 0 {
			do = append(do, fmt.Sprintf("lengthen the preStop hook: it kept the pod serving %s after its deletion, "+
				"and nodes still sent it new connections after that; it must outlast the endpoint propagation plus "+
				"kube-proxy's minSyncPeriod (5–15 s is common)", readableS(cfg.PreStopS)))
		} else {
			do = append(do, preStopSleep)
		}
	}
	if !drains(cfg) {
		if cut || early {
			do = append(do, drainOnSigterm)
		}
	} else {
		if e.ConnectionClosed > 0 {
			do = append(do, "the pod drains on SIGTERM, but "+drainCut(cfg)+" cut the drain short: give it "+
				"the time its longest requests take")
		}
		if e.ConnectionReset > 0 {
			do = append(do, "the pod already drains on SIGTERM: what resets remain are requests sent on an idle "+
				"keep-alive connection just as it closed it, which only a client that retries idempotent requests "+
				"on a new connection hides")
		}
	}
	if len(do) == 0 {
		return ""
	}
	s := "Avoid it: " + strings.Join(do, "; ") + "."
	if early {
		s += fmt.Sprintf(" terminationGracePeriodSeconds (%s now) must cover the preStop sleep and the drain.",
			readableS(cfg.TerminationGracePeriodS))
	}
	return s
}

// unattributed says what errors no removed pod caused usually are.
func unattributed(r *result.Result, e result.Errors) string {
	var s []string
	if e.ConnectionRefused > 0 {
		why := "Refusals with no pod to blame come from kube-proxy itself: while a service has no endpoint, " +
			"its rules reject new connections at once."
		if spans := noEndpoints(r); spans != "" {
			why += " No ready endpoint: " + spans + "."
		}
		s = append(s, why)
	}
	if e.Timeout > 0 {
		s = append(s, "Timeouts with no pod to blame are slow answers from live pods (overload, CPU throttling) "+
			"or lost packets.")
	}
	if e.ConnectionReset+e.ConnectionClosed > 0 {
		s = append(s, "The engine did not trace the resets or closes to a pod.")
	}
	if e.HTTP503 > 0 {
		s = append(s, "503s with no pod to blame are a sidecar's own answers: no healthy upstream, "+
			"its circuit breakers overflowing, or its retries spent.")
	}
	if e.NoSuchHost > 0 {
		s = append(s, "Names that did not resolve are headless Services that had no ready pod: "+
			"DNS answers NXDOMAIN until one is ready again.")
	}
	return strings.Join(s, " ")
}

// noEndpoints lists the spans of the timeline in which a service had no ready
// endpoint, as "web 12s–15s, 40s–41s"; "" when there were none (or no timeline).
func noEndpoints(r *result.Result) string {
	step := r.TimelineIntervalS
	if step <= 0 {
		step = 1
	}
	var out []string
	for _, svc := range services(r) {
		var spans []string
		start := -1.0
		for i, pt := range r.Timeline {
			n, ok := pt.ReadyEndpoints[svc]
			empty := ok && n == 0
			if empty && start < 0 {
				start = pt.TS
			}
			last := i == len(r.Timeline)-1
			if start >= 0 && (!empty || last) {
				end := pt.TS
				if empty {
					end += step
				}
				spans = append(spans, at(start)+"–"+at(end))
				start = -1
			}
		}
		if len(spans) > 4 {
			spans = append(spans[:3], fmt.Sprintf("and %d more", len(spans)-3))
		}
		if len(spans) > 0 {
			out = append(out, svc+" "+strings.Join(spans, ", "))
		}
	}
	return strings.Join(out, "; ")
}

// indentWrap wraps s to the report's width, the first line after first, the rest after rest.
func indentWrap(s, first, rest string) string {
	lines := strings.Split(wrap(s, width-len(first)), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else {
			lines[i] = rest + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}
