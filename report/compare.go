package report

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"trafficlab/result"
)

// Compare writes results side by side, one column each, the first being the
// baseline: every other column shows its change against the first and a '*' where
// that change is beyond the row's threshold (see marked). It reads only the
// Results, so it compares engines (simulate against emulate) as readily as runs.
// names label the columns, usually the files the results came from.
func Compare(w io.Writer, names []string, rs []*result.Result) error {
	if len(rs) < 2 {
		return errors.New("compare needs at least two results")
	}
	if len(names) != len(rs) {
		return fmt.Errorf("compare: %d names for %d results", len(names), len(rs))
	}
	b := &strings.Builder{}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	heads := make([]string, len(rs))
	runs := make([]string, len(rs))
	for i, r := range rs {
		heads[i] = columnName(names, i)
		runs[i] = joinKnown(r.Engine, r.Scenario, seedOf(r), covered(r))
	}
	// The last cell of a line ends without a tab, so lines carry no trailing blanks.
	fmt.Fprintf(tw, "\t%s\n", strings.Join(heads, "\t"))
	fmt.Fprintf(tw, "\t%s\n", strings.Join(runs, "\t"))
	for _, o := range originRows(rs) {
		fmt.Fprintf(tw, "%s\t%s\n", o.label, strings.Join(o.cells, "\t"))
	}
	for _, m := range compareRows(rs) {
		var cells []string
		for _, c := range compareCells(m, rs) {
			cells = append(cells, c.String())
		}
		fmt.Fprintf(tw, "%s\t%s\n", m.label, strings.Join(cells, "\t"))
	}
	tw.Flush()
	b.WriteString("\n")
	for _, n := range compareNotes(names, rs) {
		fmt.Fprintf(b, "%s\n", wrap(n, width))
	}
	fmt.Fprintf(b, "%s\n", wrap("Changes are against the first column. * marks a change beyond its row's threshold: "+
		"counts and throughput over 10% (or from or to zero), idle pods any change, latencies over 10% and over 0.1 ms, "+
		"shares over 10% and over 0.01 points; then whether it is better or worse: higher is better for throughput "+
		"and the quietest pod's share, lower for latencies, errors, the slow share, idle pods, the busiest pod's "+
		"share, retransmits and the arrivals a client fell behind on; the CPU rows are not judged.", width))
	_, err := io.WriteString(w, b.String())
	return err
}

// covered is how long a run lasted, and of how long planned when it was interrupted.
func covered(r *result.Result) string {
	if r.Interrupted {
		return fmt.Sprintf("%s of %s, interrupted", GoDuration(r.DurationS), GoDuration(r.PlannedDurationS))
	}
	return span(r.DurationS)
}

// originRow is a line of the table's head that says what a run was asked for.
type originRow struct {
	label string
	cells []string
}

// originRows are the scenario file of each run and the overrides it ran with, as
// typed on the command line ("none" without any), when any run recorded them; "-"
// for a run that did not. Two runs of one file differ by these.
func originRows(rs []*result.Result) []originRow {
	if !anyOf(rs, func(r *result.Result) bool { return r.Origin != nil }) {
		return nil
	}
	file, overrides := originRow{label: "file"}, originRow{label: "overrides"}
	for _, r := range rs {
		o := r.Origin
		switch {
		case o == nil:
			file.cells, overrides.cells = append(file.cells, "-"), append(overrides.cells, "-")
			continue
		case o.File == "":
			file.cells = append(file.cells, "(built-in example)")
		default:
			file.cells = append(file.cells, o.File)
		}
		overrides.cells = append(overrides.cells, commandLine(o))
	}
	return []originRow{file, overrides}
}

// commandLine is an origin's overrides as typed: --set PATH=VALUE in order, then
// --seed, --duration and --scale; "none" when there are none.
func commandLine(o *result.Origin) string {
	var args []string
	for _, s := range o.Sets {
		args = append(args, "--set "+s)
	}
	if o.Seed != nil {
		args = append(args, fmt.Sprintf("--seed %d", *o.Seed))
	}
	if o.DurationS > 0 {
		args = append(args, "--duration "+GoDuration(o.DurationS))
	}
	if o.Scale > 0 {
		args = append(args, fmt.Sprintf("--scale %g", o.Scale))
	}
	if len(args) == 0 {
		return "none"
	}
	return strings.Join(args, " ")
}

// columnName is the name of column i: its given name, else "result N".
func columnName(names []string, i int) string {
	if names[i] == "" {
		return fmt.Sprintf("result %d", i+1)
	}
	return names[i]
}

// changeRule is how a row judges whether a difference matters.
type changeRule int

const (
	// countRule: requests, errors, retransmits and throughput. A change from or to
	// zero always matters (errors appearing is the news); otherwise more than 10%.
	countRule changeRule = iota
	// exactRule: idle pods, a handful at most, where one more is already a finding.
	exactRule
	// latencyRule: more than 10% and more than 0.1 ms. The floor keeps sub-millisecond
	// percentiles, which move by tens of microseconds between engines (the kernel's
	// scheduling in emulate), from being marked for noise.
	latencyRule
	// shareRule: shares of requests (slow share, a pod's share): more than 10%
	// relative and more than 0.01 percentage points (one request in 10,000). Slow
	// shares are small, so the floor is low: 0.01% against 0.08% slow is marked,
	// 0.005% against 0.01% (a handful of requests in a short run) is not.
	shareRule
)

// Thresholds of the rules above; shares are fractions, so 0.0001 is 0.01
// percentage points.
const (
	relThreshold     = 0.10
	latencyFloorMS   = 0.1
	shareFloorPoints = 0.0001
)

// marked says whether b differs from the baseline a beyond the rule's threshold.
func marked(k changeRule, a, b float64) bool {
	d := math.Abs(b - a)
	if d == 0 {
		return false
	}
	rel := math.Inf(1)
	if a != 0 {
		rel = d / math.Abs(a)
	}
	switch k {
	case exactRule:
		return true
	case latencyRule:
		return d > latencyFloorMS && rel > relThreshold
	case shareRule:
		return d > shareFloorPoints && rel > relThreshold
	}
	return a == 0 || b == 0 || rel > relThreshold
}

// better is the way a row's figure improves: a marked change that way is better,
// the other way worse (the page draws them green and red). Requests have neither:
// more of them is more load, not better service.
type better int

const (
	neither better = iota
	higher
	lower
)

// verdict judges b against the baseline a: "better", "worse", or "" when they are
// equal or the row has no direction.
func (d better) verdict(a, b float64) string {
	switch {
	case a == b || d == neither:
		return ""
	case (b > a) == (d == higher):
		return "better"
	}
	return "worse"
}

// relative writes b's change against a: "+41%", "−3.2%", "=" when equal, "from 0"
// when there is no base to divide by.
func relative(a, b float64) string {
	switch {
	case a == b:
		return "="
	case a == 0:
		return "from 0"
	case b > a:
		return "+" + pct((b-a)/math.Abs(a))
	}
	return "−" + pct((a-b)/math.Abs(a))
}

// compareRow is one row: how to read it from a result (ok false when the result has
// nothing for it, as a run without TCP has no retransmits) and how to judge it.
type compareRow struct {
	label  string
	rule   changeRule
	better better
	cell   func(r *result.Result) (v float64, text string, ok bool)
}

// judged is m with the direction d: a busiest pod's share is better lower, a
// quietest's higher (either way, more even).
func (m compareRow) judged(d better) compareRow {
	m.better = d
	return m
}

// compareCell is one cell: its value and change, whether the change is marked, and
// if so whether it is better or worse ("" when the row has no direction).
type compareCell struct {
	text    string
	marked  bool
	verdict string
}

// String is the cell as the text table writes it: "2.400ms (+26%) * worse".
func (c compareCell) String() string {
	s := c.text
	if c.marked {
		s += " *"
		if c.verdict != "" {
			s += " " + c.verdict
		}
	}
	return s
}

// compareCells writes one row: the baseline's value, then each other value with its change.
func compareCells(m compareRow, rs []*result.Result) []compareCell {
	out := make([]compareCell, len(rs))
	base, _, baseOK := m.cell(rs[0])
	for i, r := range rs {
		v, text, ok := m.cell(r)
		switch {
		case !ok && text == noSuccesses:
			out[i].text = text // why there is no value: not a missing figure but no success
		case !ok:
			out[i].text = "-"
		case i == 0 || !baseOK:
			out[i].text = text
		default:
			out[i].text = fmt.Sprintf("%s (%s)", text, relative(base, v))
			if marked(m.rule, base, v) {
				out[i].marked, out[i].verdict = true, m.better.verdict(base, v)
			}
		}
	}
	return out
}

// compareRows lists the rows: totals and latencies always; each error kind, the slow
// share and TCP retransmits when any result has them; the spread per service.
func compareRows(rs []*result.Result) []compareRow {
	rows := []compareRow{
		{"requests", countRule, neither, func(r *result.Result) (float64, string, bool) {
			return float64(r.Requests.Total), count(r.Requests.Total), true
		}},
		{"throughput (rps)", countRule, higher, func(r *result.Result) (float64, string, bool) {
			return r.ThroughputRPS, rps(r.ThroughputRPS), true
		}},
		latencyRow("latency p50", func(l result.Latency) float64 { return l.P50 }),
		latencyRow("latency p99", func(l result.Latency) float64 { return l.P99 }),
		latencyRow("latency p99.9", func(l result.Latency) float64 { return l.P999 }),
		latencyRow("latency max", func(l result.Latency) float64 { return l.Max }),
		{"errors", countRule, lower, func(r *result.Result) (float64, string, bool) {
			return float64(failed(r)), count(failed(r)), true
		}},
	}
	for k := range result.ErrorKinds {
		for _, r := range rs {
			if r.Errors.Of(k) > 0 {
				rows = append(rows, compareRow{"  " + k.String(), countRule, lower, func(r *result.Result) (float64, string, bool) {
					n := r.Errors.Of(k)
					return float64(n), count(n), true
				}})
				break
			}
		}
	}
	// The failures of no kind (another error status), so that the kinds add up.
	if anyOf(rs, func(r *result.Result) bool { return failed(r) > r.Errors.Total() }) {
		rows = append(rows, compareRow{"  of no kind", countRule, lower, func(r *result.Result) (float64, string, bool) {
			n := failed(r) - r.Errors.Total()
			return float64(n), count(n), true
		}})
	}
	if anyOf(rs, func(r *result.Result) bool { return r.Slow > 0 }) {
		rows = append(rows, compareRow{"slow share", shareRule, lower, func(r *result.Result) (float64, string, bool) {
			// The slow share is of the successful requests, as the latencies are.
			if r.Requests.OK == 0 {
				return 0, noSuccesses, false
			}
			s := slowShare(r)
			return s, pct(s), true
		}})
	}
	rows = append(rows, spreadRows(rs)...)
	rows = append(rows, callRows(rs)...)
	rows = append(rows, cpuRows(rs)...)
	if anyOf(rs, func(r *result.Result) bool { return r.TCP != nil }) {
		rows = append(rows, compareRow{"tcp retransmits", countRule, lower, func(r *result.Result) (float64, string, bool) {
			if r.TCP == nil {
				return 0, "", false
			}
			return float64(r.TCP.Retransmits), count(r.TCP.Retransmits), true
		}})
	}
	return rows
}

// latencyRow reads a percentile of the successful requests. A run with none has no
// latency, not a latency of 0: its cell says so and no change to or from it is
// judged (a run where everything failed is not "better").
func latencyRow(label string, of func(result.Latency) float64) compareRow {
	return compareRow{label, latencyRule, lower, func(r *result.Result) (float64, string, bool) {
		if r.Requests.OK == 0 {
			return 0, noSuccesses, false
		}
		v := of(r.LatencyMS)
		return v, ms(v), true
	}}
}

// noSuccesses is the cell of a figure over successful requests in a run with none.
const noSuccesses = "— (no successes)"

// slowShare is the result's slow share, derived from the counts by results that
// carry only those (as writeSlow does).
func slowShare(r *result.Result) float64 {
	if r.SlowShare == 0 {
		return ratio(r.Slow, r.Requests.OK)
	}
	return r.SlowShare
}

// spreadRows are, per service of any result, its idle pods and the largest and
// smallest share of its requests a pod got. The service's name is in the label only
// when there are several. A result without the service shows "-".
func spreadRows(rs []*result.Result) []compareRow {
	var svcs []string
	seen := map[string]bool{}
	for _, r := range rs {
		for _, s := range services(r) {
			if !seen[s] {
				seen[s] = true
				svcs = append(svcs, s)
			}
		}
	}
	var out []compareRow
	for _, svc := range svcs {
		suffix := ""
		if len(svcs) > 1 {
			suffix = " (" + svc + ")"
		}
		out = append(out,
			compareRow{"idle pods" + suffix, exactRule, lower, func(r *result.Result) (float64, string, bool) {
				pods := podsOf(r, svc)
				n := idlePods(pods)
				return float64(n), fmt.Sprintf("%d of %d", n, len(pods)), len(pods) > 0
			}},
			shareRow("max pod share"+suffix, svc, func(a, b int64) bool { return b > a }).judged(lower),
			shareRow("min pod share"+suffix, svc, func(a, b int64) bool { return b < a }).judged(higher))
	}
	return out
}

// callRows are, when services call services in any result, each service's p99 at its
// pods and each call's p99 as its caller saw it and its failed calls. A result
// without the service or call shows "-".
func callRows(rs []*result.Result) []compareRow {
	var svcs []string
	var edges [][2]string
	seenSvc, seenEdge := map[string]bool{}, map[[2]string]bool{}
	for _, r := range rs {
		for _, s := range r.Services {
			if s.LatencyMS != nil && !seenSvc[s.Name] {
				seenSvc[s.Name] = true
				svcs = append(svcs, s.Name)
			}
		}
		for _, e := range r.Edges {
			if k := [2]string{e.From, e.To}; !seenEdge[k] {
				seenEdge[k] = true
				edges = append(edges, k)
			}
		}
	}
	var out []compareRow
	for _, svc := range svcs {
		fig, _ := FigureNamed("service." + svc + ".p99_ms")
		out = append(out, figureRow(svc+": p99 at its pods", fig, latencyRule, lower))
	}
	for _, e := range edges {
		name := "edge." + e[0] + "." + e[1] + "."
		p99, _ := FigureNamed(name + "p99_ms")
		errs, _ := FigureNamed(name + "errors")
		out = append(out, figureRow("calls "+e[0]+" → "+e[1]+" p99", p99, latencyRule, lower),
			figureRow("calls "+e[0]+" → "+e[1]+" failed", errs, countRule, lower))
	}
	return out
}

// figureRow is a row of one of a service's or a call's figures, absent ("-") from a
// result without them.
func figureRow(label string, f Figure, rule changeRule, d better) compareRow {
	return compareRow{label, rule, d, func(r *result.Result) (float64, string, bool) {
		v := f.Of(r)
		if math.IsNaN(v) {
			return 0, "", false
		}
		return v, f.Unit.Format(v), true
	}}
}

// shareRow is the share of svc's requests of the pod that pick prefers (the busiest
// or the quietest); no value when the service got no request in that result.
func shareRow(label, svc string, pick func(a, b int64) bool) compareRow {
	return compareRow{label, shareRule, neither, func(r *result.Result) (float64, string, bool) {
		pods := podsOf(r, svc)
		total := int64(0)
		for _, p := range pods {
			total += p.Requests
		}
		if total == 0 {
			return 0, "", false
		}
		picked := pods[0].Requests
		for _, p := range pods[1:] {
			if pick(picked, p.Requests) {
				picked = p.Requests
			}
		}
		s := ratio(picked, total)
		return s, pct(s), true
	}}
}

func anyOf(rs []*result.Result, has func(*result.Result) bool) bool {
	for _, r := range rs {
		if has(r) {
			return true
		}
	}
	return false
}

// compareNotes say what makes columns less comparable than they look: runs cut
// short, other scenarios, other durations (counts scale with time), other slow thresholds.
func compareNotes(names []string, rs []*result.Result) []string {
	var notes []string
	for i, r := range rs {
		if r.Interrupted {
			notes = append(notes, fmt.Sprintf("Note: %s was interrupted: its figures cover the first %s of the %s planned.",
				columnName(names, i), GoDuration(r.DurationS), GoDuration(r.PlannedDurationS)))
		}
	}
	if s := distinct(rs, scenarioName); len(s) > 1 {
		notes = append(notes, fmt.Sprintf("Note: these results are of different scenarios (%s): differences come from the scenarios, not only from the engines or seeds.",
			strings.Join(s, ", ")))
	}
	if d := distinct(rs, func(r *result.Result) string { return span(r.DurationS) }); len(d) > 1 {
		notes = append(notes, fmt.Sprintf("Note: the runs lasted different times (%s): compare throughput, latencies and shares rather than counts.",
			strings.Join(d, ", ")))
	}
	slow := distinct(rs, func(r *result.Result) string {
		if r.SlowThresholdMS <= 0 {
			return ""
		}
		return readableMS(r.SlowThresholdMS)
	})
	if len(slow) > 1 && anyOf(rs, func(r *result.Result) bool { return r.Slow > 0 }) {
		notes = append(notes, fmt.Sprintf("Note: the slow thresholds differ (%s): the slow shares count different things.", strings.Join(slow, ", ")))
	}
	return notes
}

// distinct lists the different values of key over the results, in order; "" is
// written as "none".
func distinct(rs []*result.Result, key func(*result.Result) string) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rs {
		k := key(r)
		if k == "" {
			k = "none"
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// cpuRows are, when any result modelled them, the CPU its client pods and
// kube-proxy's relaying spent, and the arrivals clients fell behind on.
func cpuRows(rs []*result.Result) []compareRow {
	sum := func(r *result.Result, of func(result.Node) float64) float64 {
		n := 0.0
		for _, x := range r.Nodes {
			n += of(x)
		}
		return n
	}
	var out []compareRow
	for _, row := range []struct {
		label string
		of    func(result.Node) float64
	}{
		{"client CPU (cores)", func(n result.Node) float64 { return n.ClientCPUCores }},
		{"kube-proxy CPU (cores)", func(n result.Node) float64 { return n.ProxyCPUCores }},
	} {
		if anyOf(rs, func(r *result.Result) bool { return sum(r, row.of) > 0 }) {
			out = append(out, compareRow{row.label, countRule, neither, func(r *result.Result) (float64, string, bool) {
				v := sum(r, row.of)
				return v, trimFloat(v), true
			}})
		}
	}
	if anyOf(rs, func(r *result.Result) bool { return r.Requests.Behind > 0 }) {
		out = append(out, compareRow{"not sent, client behind", countRule, lower, func(r *result.Result) (float64, string, bool) {
			return float64(r.Requests.Behind), count(r.Requests.Behind), true
		}})
	}
	return out
}
