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
		runs[i] = fmt.Sprintf("%s · %s · seed %d · %s", r.Engine, r.Scenario, r.Seed, span(r.DurationS))
	}
	// The last cell of a line ends without a tab, so lines carry no trailing blanks.
	fmt.Fprintf(tw, "\t%s\n", strings.Join(heads, "\t"))
	fmt.Fprintf(tw, "\t%s\n", strings.Join(runs, "\t"))
	for _, m := range compareRows(rs) {
		fmt.Fprintf(tw, "%s\t%s\n", m.label, strings.Join(compareCells(m, rs), "\t"))
	}
	tw.Flush()
	b.WriteString("\n")
	for _, n := range compareNotes(rs) {
		fmt.Fprintf(b, "%s\n", wrap(n, width))
	}
	fmt.Fprintf(b, "%s\n", wrap("Changes are against the first column. * marks a change beyond its row's threshold: "+
		"counts and throughput over 10% (or from or to zero), idle pods any change, latencies over 10% and over 0.1 ms, "+
		"shares over 10% and over 0.01 points.", width))
	_, err := io.WriteString(w, b.String())
	return err
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
	label string
	rule  changeRule
	cell  func(r *result.Result) (v float64, text string, ok bool)
}

// compareCells writes one row: the baseline's value, then each other value with its change.
func compareCells(m compareRow, rs []*result.Result) []string {
	out := make([]string, len(rs))
	base, _, baseOK := m.cell(rs[0])
	for i, r := range rs {
		v, text, ok := m.cell(r)
		switch {
		case !ok:
			out[i] = "-"
		case i == 0 || !baseOK:
			out[i] = text
		default:
			out[i] = fmt.Sprintf("%s (%s)", text, relative(base, v))
			if marked(m.rule, base, v) {
				out[i] += " *"
			}
		}
	}
	return out
}

// compareRows lists the rows: totals and latencies always; each error kind, the slow
// share and TCP retransmits when any result has them; the spread per service.
func compareRows(rs []*result.Result) []compareRow {
	rows := []compareRow{
		{"requests", countRule, func(r *result.Result) (float64, string, bool) {
			return float64(r.Requests.Total), count(r.Requests.Total), true
		}},
		{"throughput (rps)", countRule, func(r *result.Result) (float64, string, bool) {
			return r.ThroughputRPS, rps(r.ThroughputRPS), true
		}},
		latencyRow("latency p50", func(l result.Latency) float64 { return l.P50 }),
		latencyRow("latency p99", func(l result.Latency) float64 { return l.P99 }),
		latencyRow("latency p99.9", func(l result.Latency) float64 { return l.P999 }),
		latencyRow("latency max", func(l result.Latency) float64 { return l.Max }),
		{"errors", countRule, func(r *result.Result) (float64, string, bool) {
			return float64(r.Errors.Total()), count(r.Errors.Total()), true
		}},
	}
	for _, k := range errorKinds {
		for _, r := range rs {
			if k.of(r.Errors) > 0 {
				rows = append(rows, compareRow{"  " + k.name, countRule, func(r *result.Result) (float64, string, bool) {
					n := k.of(r.Errors)
					return float64(n), count(n), true
				}})
				break
			}
		}
	}
	if anyOf(rs, func(r *result.Result) bool { return r.Slow > 0 }) {
		rows = append(rows, compareRow{"slow share", shareRule, func(r *result.Result) (float64, string, bool) {
			s := slowShare(r)
			return s, pct(s), true
		}})
	}
	rows = append(rows, spreadRows(rs)...)
	if anyOf(rs, func(r *result.Result) bool { return r.TCP != nil }) {
		rows = append(rows, compareRow{"tcp retransmits", countRule, func(r *result.Result) (float64, string, bool) {
			if r.TCP == nil {
				return 0, "", false
			}
			return float64(r.TCP.Retransmits), count(r.TCP.Retransmits), true
		}})
	}
	return rows
}

func latencyRow(label string, of func(result.Latency) float64) compareRow {
	return compareRow{label, latencyRule, func(r *result.Result) (float64, string, bool) {
		v := of(r.LatencyMS)
		return v, ms(v), true
	}}
}

// errorKinds are the error kinds in the order, and with the names, of the JSON result.
var errorKinds = []struct {
	name string
	of   func(result.Errors) int64
}{
	{"timeout", func(e result.Errors) int64 { return e.Timeout }},
	{"connection_refused", func(e result.Errors) int64 { return e.ConnectionRefused }},
	{"connection_reset", func(e result.Errors) int64 { return e.ConnectionReset }},
	{"connection_closed", func(e result.Errors) int64 { return e.ConnectionClosed }},
	{"http_503", func(e result.Errors) int64 { return e.HTTP503 }},
}

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
			compareRow{"idle pods" + suffix, exactRule, func(r *result.Result) (float64, string, bool) {
				pods := podsOf(r, svc)
				n := idlePods(pods)
				return float64(n), fmt.Sprintf("%d of %d", n, len(pods)), len(pods) > 0
			}},
			shareRow("max pod share"+suffix, svc, func(a, b int64) bool { return b > a }),
			shareRow("min pod share"+suffix, svc, func(a, b int64) bool { return b < a }))
	}
	return out
}

// shareRow is the share of svc's requests of the pod that better picks (the busiest
// or the quietest); no value when the service got no request in that result.
func shareRow(label, svc string, better func(a, b int64) bool) compareRow {
	return compareRow{label, shareRule, func(r *result.Result) (float64, string, bool) {
		pods := podsOf(r, svc)
		total := int64(0)
		for _, p := range pods {
			total += p.Requests
		}
		if total == 0 {
			return 0, "", false
		}
		pick := pods[0].Requests
		for _, p := range pods[1:] {
			if better(pick, p.Requests) {
				pick = p.Requests
			}
		}
		s := ratio(pick, total)
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

// compareNotes say what makes columns less comparable than they look: other
// scenarios, other durations (counts scale with time), other slow thresholds.
func compareNotes(rs []*result.Result) []string {
	var notes []string
	if s := distinct(rs, func(r *result.Result) string { return r.Scenario }); len(s) > 1 {
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
