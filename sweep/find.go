package sweep

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"trafficlab/report"
	"trafficlab/result"
	"trafficlab/scenario"
)

// Query is a parsed --find: "min PATH where COND and COND ...".
type Query struct {
	Text  string
	Max   bool
	Axis  int // the searched axis, an index into the sweep's axes
	Conds []Cond
}

// Cond is one condition on a figure: p99 < 50ms.
type Cond struct {
	Figure report.Figure
	Op     string
	Value  float64
}

var (
	queryRE = regexp.MustCompile(`^\s*(min|max)\s+(\S+)\s+where\s+(.+?)\s*$`)
	andRE   = regexp.MustCompile(`\s+and\s+`)
	condRE  = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*(<=|>=|==|!=|<|>)\s*(\S+)\s*$`)
)

// figureAliases are the short names people type for figures.
var figureAliases = map[string]string{
	"p99.9": "p999_ms", "max": "max_ms", "rps": "throughput_rps", "throughput": "throughput_rps",
	"idle": "idle_pods", "timeouts": "timeout", "refused": "connection_refused",
	"reset": "connection_reset", "resets": "connection_reset", "closed": "connection_closed",
	"503": "http_503", "slow": "slow_share",
}

// ParseQuery reads a --find query against the sweep's axes; PATH must be one of them.
func ParseQuery(q string, axes []Axis) (Query, error) {
	m := queryRE.FindStringSubmatch(q)
	if m == nil {
		return Query{}, fmt.Errorf(`--find %q: want "min PATH where CONDITION [and CONDITION...]", e.g. "min spec.services[0].replicas where p99 < 50ms and errors == 0"`, q)
	}
	out := Query{Text: strings.TrimSpace(q), Max: m[1] == "max", Axis: -1}
	for i, a := range axes {
		if a.Path == m[2] {
			out.Axis = i
		}
	}
	if out.Axis < 0 {
		var paths []string
		for _, a := range axes {
			paths = append(paths, a.Path)
		}
		return Query{}, fmt.Errorf("--find: %s is not swept; the swept paths are %s", m[2], strings.Join(paths, ", "))
	}
	if _, err := order(axes[out.Axis].Values); err != nil {
		return Query{}, fmt.Errorf("--find %s: %v", m[2], err)
	}
	for _, c := range andRE.Split(m[3], -1) {
		cond, err := parseCond(c)
		if err != nil {
			return Query{}, fmt.Errorf("--find: %v", err)
		}
		out.Conds = append(out.Conds, cond)
	}
	return out, nil
}

func parseCond(s string) (Cond, error) {
	m := condRE.FindStringSubmatch(s)
	if m == nil {
		return Cond{}, fmt.Errorf("%q: want FIGURE OP VALUE with OP one of < <= > >= == !=, e.g. p99 < 50ms", s)
	}
	f, ok := lookupFigure(m[1])
	if !ok {
		var names []string
		for _, f := range report.Figures {
			names = append(names, f.Name)
		}
		return Cond{}, fmt.Errorf("%q: no figure %s; figures: %s (p50 for p50_ms, rps, idle, refused, ... also work); "+
			"with calls, service.NAME.{requests,errors,mean,p99} and edge.FROM.TO.{requests,attempts,retries,errors,p50,p99}",
			s, m[1], strings.Join(names, ", "))
	}
	v, err := figureValue(f, m[3])
	if err != nil {
		return Cond{}, fmt.Errorf("%q: %v", s, err)
	}
	// Every figure is a count, a rate, a latency or a share: a finite number, never
	// negative. NaN compares false with anything, so a condition on it would never
	// hold and the query would quietly have no answer.
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return Cond{}, fmt.Errorf("%q: %s is not a finite number", s, m[3])
	case v < 0:
		return Cond{}, fmt.Errorf("%q: %s is never negative", s, f.Name)
	}
	return Cond{Figure: f, Op: m[2], Value: v}, nil
}

func lookupFigure(name string) (report.Figure, bool) {
	for _, n := range []string{name, name + "_ms", figureAliases[name]} {
		if n == "" {
			continue
		}
		if f, ok := report.FigureNamed(n); ok {
			return f, true
		}
	}
	return report.Figure{}, false
}

// figureValue reads a value in the figure's unit, which must be written out: a bare
// "50" against a latency could mean 50 ms or 50 s, and against a share 50% or 5000%.
func figureValue(f report.Figure, v string) (float64, error) {
	switch f.Unit {
	case report.Millis:
		d, err := time.ParseDuration(v)
		if err != nil {
			return 0, fmt.Errorf("%s is a latency: write it as a duration, e.g. 50ms", f.Name)
		}
		return float64(d) / float64(time.Millisecond), nil
	case report.Share:
		p, err := scenario.ParsePercent(v)
		if err != nil {
			return 0, fmt.Errorf("%s is a share of requests: write it as a percentage, e.g. 30%%", f.Name)
		}
		return p.Fraction, nil
	case report.PerSec:
		if r, err := scenario.ParseRate(v); err == nil {
			return r.PerSecond, nil
		}
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is a number: %q is not", f.Name, v)
	}
	return n, nil
}

func (c Cond) holds(v float64) bool {
	switch c.Op {
	case "<":
		return v < c.Value
	case "<=":
		return v <= c.Value
	case ">":
		return v > c.Value
	case ">=":
		return v >= c.Value
	case "==":
		return v == c.Value
	}
	return v != c.Value
}

// met says whether every condition holds on every run of the point: a value that
// passes on one seed and fails on another is not an answer to rely on.
func (q Query) met(p result.SweepPoint) bool {
	for _, r := range p.Runs {
		for _, c := range q.Conds {
			// A run without the figure (no such service or call) does not meet it.
			if v, ok := r.Figures[c.Figure.Name]; !ok || !c.holds(v) {
				return false
			}
		}
	}
	return true
}

// Unknown lists the query's figures that no run of the sweep has: a service or a
// call its scenario does not have.
func (q Query) Unknown(sw *result.Sweep) []string {
	var out []string
	for _, c := range q.Conds {
		found := false
		for _, p := range sw.Points {
			for _, r := range p.Runs {
				_, ok := r.Figures[c.Figure.Name]
				found = found || ok
			}
		}
		if !found {
			out = append(out, c.Figure.Name)
		}
	}
	return out
}

// Answer finds, for each combination of the other axes' values, the smallest (or
// largest) value of the searched axis whose point meets the query.
func (q Query) Answer(sw *result.Sweep, axes []Axis) *result.Find {
	keys, _ := order(axes[q.Axis].Values) // ParseQuery checked they order
	key := map[string]float64{}
	for i, v := range axes[q.Axis].Values {
		key[v] = keys[i]
	}
	f := &result.Find{Query: q.Text, Parameter: axes[q.Axis].Path}
	for _, c := range q.Conds {
		f.Figures = append(f.Figures, c.Figure.Name)
	}
	group := map[string]int{} // the other values, joined, to their answer in f.Answers
	for i, p := range sw.Points {
		others := append(append([]string(nil), p.Values[:q.Axis]...), p.Values[q.Axis+1:]...)
		id := strings.Join(others, "\x00")
		g, ok := group[id]
		if !ok {
			g = len(f.Answers)
			group[id] = g
			f.Answers = append(f.Answers, result.FindAnswer{Others: others})
		}
		if !q.met(p) {
			continue
		}
		a := &f.Answers[g]
		v := p.Values[q.Axis]
		if a.Value == nil || (q.Max && key[v] > key[*a.Value]) || (!q.Max && key[v] < key[*a.Value]) {
			a.Value, a.Point = &v, &i
		}
	}
	return f
}
