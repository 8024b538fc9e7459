package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"trafficlab/result"
)

// sweepColumns are the figures the sweep table shows, with their headings. Error
// kinds and the slow share show only when some point has them; the CSV and JSON carry
// every figure.
var sweepColumns = []struct {
	figure, head string
	always       bool
}{
	{"throughput_rps", "THROUGHPUT", true},
	{"p50_ms", "P50", true},
	{"p99_ms", "P99", true},
	{"p999_ms", "P99.9", true},
	{"errors", "ERRORS", true},
	{"timeout", "TIMEOUT", false},
	{"connection_refused", "REFUSED", false},
	{"connection_reset", "RESET", false},
	{"connection_closed", "CLOSED", false},
	{"http_503", "503", false},
	{"slow_share", "SLOW", false},
	{"idle_pods", "IDLE PODS", true},
	{"max_pod_share", "MAX POD SHARE", true},
	{"min_pod_share", "MIN POD SHARE", true},
}

// SweepText writes a sweep as a table, one row per point: the mean of each figure
// over the seeds, with its sample standard deviation when there are several, then
// the --find answers.
func SweepText(w io.Writer, sw *result.Sweep) error {
	b := &strings.Builder{}
	if sw.Interrupted {
		find := ""
		if sw.Find == nil {
			find = "; --find is not answered over an incomplete grid"
		}
		fmt.Fprintf(b, "%s\n\n", wrap(fmt.Sprintf("Interrupted: incomplete, %d of the %s finished on every seed and are shown; the others are left out%s.",
			len(sw.Points), plural(int64(sw.PlannedPoints), "point"), find), width))
	}
	each := lengthOf(sw.Engine, sw.DurationS) + " per run"
	if slices.Contains(sw.Parameters, "spec.duration") {
		each = "durations as swept"
	}
	fmt.Fprintf(b, "Sweep of %s: %s, %s, %s × %s\n", sw.Scenario, sw.Engine, each,
		plural(int64(len(sw.Points)), "point"), plural(int64(sw.Seeds), "seed"))
	if sw.File != "" {
		fmt.Fprintf(b, "File: %s\n", sw.File)
	}
	for _, f := range sw.Fixed {
		fmt.Fprintf(b, "Every point: --set %s\n", f)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	var heads []string
	for _, p := range sw.Parameters {
		heads = append(heads, strings.ToUpper(parameterLabel(p, sw.Parameters)))
	}
	var shown []Figure
	for _, c := range sweepColumns {
		if c.always || anyPoint(sw, c.figure) {
			f, _ := FigureNamed(c.figure)
			shown = append(shown, f)
			heads = append(heads, c.head)
		}
	}
	fmt.Fprintln(tw, strings.Join(heads, "\t"))
	for _, p := range sw.Points {
		cells := append([]string(nil), p.Values...)
		for _, f := range shown {
			cell := f.Unit.Format(p.Mean[f.Name])
			if sw.Seeds > 1 && p.SD[f.Name] != 0 {
				cell += " ±" + f.Unit.Format(p.SD[f.Name])
			}
			cells = append(cells, cell)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
	if sw.Seeds > 1 {
		fmt.Fprintf(b, "\n%s\n", wrap(fmt.Sprintf("Each cell is the mean over %d seeds ± their sample standard deviation "+
			"(none when every seed gave the same); every seed's figures are in the CSV and JSON.", sw.Seeds), width))
	}
	if sw.Find != nil {
		writeFind(b, sw)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// parameterLabel is a path's last element (replicas for spec.services[0].replicas),
// or the whole path when another swept path ends the same way.
func parameterLabel(path string, all []string) string {
	last := func(p string) string { return p[strings.LastIndex(p, ".")+1:] }
	for _, o := range all {
		if o != path && last(o) == last(path) {
			return path
		}
	}
	return last(path)
}

func anyPoint(sw *result.Sweep, figure string) bool {
	for _, p := range sw.Points {
		if p.Max[figure] != 0 {
			return true
		}
	}
	return false
}

// writeFind writes the answer for each combination of the other parameters.
func writeFind(b *strings.Builder, sw *result.Sweep) {
	f := sw.Find
	fmt.Fprintf(b, "\n%s\n", f.Query)
	if sw.Seeds > 1 {
		fmt.Fprintf(b, "(a value counts only if every condition holds on all %d seeds)\n", sw.Seeds)
	}
	var others []string
	for _, p := range sw.Parameters {
		if p != f.Parameter {
			others = append(others, parameterLabel(p, sw.Parameters))
		}
	}
	for _, a := range f.Answers {
		var where []string
		for i, v := range a.Others {
			where = append(where, others[i]+"="+v)
		}
		lead := "  "
		if len(where) > 0 {
			lead += strings.Join(where, " ") + ": "
		}
		if a.Value == nil {
			fmt.Fprintf(b, "%snone of the values swept meets every condition\n", lead)
			continue
		}
		p := sw.Points[*a.Point]
		var got []string
		for _, name := range f.Figures {
			fig, _ := FigureNamed(name)
			got = append(got, strings.TrimSuffix(name, "_ms")+" "+fig.Unit.Format(p.Mean[name]))
		}
		fmt.Fprintf(b, "%s%s = %s  (%s)\n", lead, parameterLabel(f.Parameter, sw.Parameters), *a.Value, strings.Join(got, ", "))
	}
}

// csvFigures are the CSV's figure columns: every one of Figures, then the services'
// and calls' figures any run has, sorted.
func csvFigures(sw *result.Sweep) []string {
	var names, graph []string
	static := map[string]bool{}
	for _, f := range Figures {
		names = append(names, f.Name)
		static[f.Name] = true
	}
	seen := map[string]bool{}
	for _, p := range sw.Points {
		for _, r := range p.Runs {
			for name := range r.Figures {
				if !static[name] && !seen[name] {
					seen[name] = true
					graph = append(graph, name)
				}
			}
		}
	}
	slices.Sort(graph)
	return append(names, graph...)
}

// SweepCSV writes one row per run: the parameters' values, the seed, then every figure.
func SweepCSV(w io.Writer, sw *result.Sweep) error {
	c := csv.NewWriter(w)
	head := append(append([]string(nil), sw.Parameters...), "seed")
	names := csvFigures(sw)
	head = append(head, names...)
	if err := c.Write(head); err != nil {
		return err
	}
	for _, p := range sw.Points {
		for _, r := range p.Runs {
			row := append(append([]string(nil), p.Values...), strconv.FormatInt(r.Seed, 10))
			for _, name := range names {
				v, ok := r.Figures[name]
				if !ok {
					row = append(row, "") // a point without that service or call
					continue
				}
				row = append(row, strconv.FormatFloat(v, 'f', -1, 64))
			}
			if err := c.Write(row); err != nil {
				return err
			}
		}
	}
	c.Flush()
	return c.Error()
}

// SweepJSON writes the sweep as indented JSON; map keys are ordered, so equal sweeps
// give equal bytes.
func SweepJSON(w io.Writer, sw *result.Sweep) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sw)
}
