package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"trafficlab/result"
)

// Unit is what a Figure measures, which decides how it is written and how a value
// compared against it must be spelled (a latency as a duration, a share as a percentage).
type Unit int

const (
	Count  Unit = iota // requests, errors, pods
	PerSec             // requests per second
	Millis             // a latency in milliseconds
	Share              // a fraction of requests, 0..1
)

// Figure is one number that sums a run up: a sweep tabulates them per point and
// `--find` tests them. Names are those of the JSON result where one exists.
type Figure struct {
	Name string
	Unit Unit
	Of   func(*result.Result) float64
}

// Figures lists every figure in the order sweep tables and CSV columns use: the
// error kinds after errors, in result's order.
var Figures = slices.Concat([]Figure{
	{"requests", Count, func(r *result.Result) float64 { return float64(r.Requests.Total) }},
	{"throughput_rps", PerSec, func(r *result.Result) float64 { return r.ThroughputRPS }},
	{"p50_ms", Millis, func(r *result.Result) float64 { return r.LatencyMS.P50 }},
	{"p90_ms", Millis, func(r *result.Result) float64 { return r.LatencyMS.P90 }},
	{"p99_ms", Millis, func(r *result.Result) float64 { return r.LatencyMS.P99 }},
	{"p999_ms", Millis, func(r *result.Result) float64 { return r.LatencyMS.P999 }},
	{"max_ms", Millis, func(r *result.Result) float64 { return r.LatencyMS.Max }},
	{"errors", Count, func(r *result.Result) float64 { return float64(r.Errors.Total()) }},
}, errorFigures(), []Figure{
	{"slow_share", Share, slowShare},
	{"idle_pods", Count, func(r *result.Result) float64 { return float64(idlePods(r.Pods)) }},
	// The pod shares are the most uneven of any service: the busiest pod's largest
	// share and the quietest pod's smallest, each of its own service's requests.
	{"max_pod_share", Share, func(r *result.Result) float64 { return podShare(r, func(a, b float64) bool { return b > a }) }},
	{"min_pod_share", Share, func(r *result.Result) float64 { return podShare(r, func(a, b float64) bool { return b < a }) }},
})

// FigureNamed finds a figure by its name: one of Figures, or a service's or a
// call's (see GraphFigures).
func FigureNamed(name string) (Figure, bool) {
	for _, f := range Figures {
		if f.Name == name {
			return f, true
		}
	}
	return graphFigure(name)
}

// errorFigures count each error kind, named as the JSON result names it.
func errorFigures() []Figure {
	var out []Figure
	for k := range result.ErrorKinds {
		out = append(out, Figure{k.String(), Count, func(r *result.Result) float64 { return float64(r.Errors.Of(k)) }})
	}
	return out
}

// podShare picks, with better, among every service's busiest (or quietest) pod share;
// 0 when no service got a request.
func podShare(r *result.Result, better func(a, b float64) bool) float64 {
	pick, found := 0.0, false
	for _, svc := range services(r) {
		row := shareRow("", svc, func(a, b int64) bool { return better(float64(a), float64(b)) })
		if s, _, ok := row.cell(r); ok && (!found || better(pick, s)) {
			pick, found = s, true
		}
	}
	return pick
}

// Format writes v as the text report writes figures of its unit.
func (u Unit) Format(v float64) string {
	switch u {
	case PerSec:
		return rps(v)
	case Millis:
		return ms(v)
	case Share:
		return pct(v)
	}
	if v != math.Trunc(v) { // a mean over seeds
		return fmt.Sprintf("%.1f", v)
	}
	return count(int64(v))
}

// The figures of one service (service.NAME.FIGURE) and of one service's calls to
// another (edge.FROM.TO.FIGURE), in a run whose services call services.
var (
	serviceFigures = []Figure{
		{"requests", Count, nil}, {"errors", Count, nil}, {"mean_ms", Millis, nil}, {"p99_ms", Millis, nil},
	}
	edgeFigures = []Figure{
		{"requests", Count, nil}, {"attempts", Count, nil}, {"retries", Count, nil}, {"errors", Count, nil},
		{"p50_ms", Millis, nil}, {"p99_ms", Millis, nil},
	}
)

// GraphFigures are r's figures of each service and each call between services: its
// requests, errors and latency at its pods; the calls' requests, attempts,
// retries, errors and latency as the caller saw it. None without calls.
func GraphFigures(r *result.Result) []Figure {
	var out []Figure
	for _, s := range r.Services {
		if s.LatencyMS == nil {
			continue
		}
		for _, f := range serviceFigures {
			g, _ := FigureNamed("service." + s.Name + "." + f.Name)
			out = append(out, g)
		}
	}
	for _, e := range r.Edges {
		for _, f := range edgeFigures {
			g, _ := FigureNamed("edge." + e.From + "." + e.To + "." + f.Name)
			out = append(out, g)
		}
	}
	return out
}

// graphFigure is the figure a name of the form service.NAME.FIGURE or
// edge.FROM.TO.FIGURE stands for (names have no dots: they are DNS labels). Of
// reports NaN for a run without that service or call.
func graphFigure(name string) (Figure, bool) {
	parts := strings.Split(name, ".")
	switch {
	case len(parts) == 3 && parts[0] == "service":
		for _, f := range serviceFigures {
			if f.Name != parts[2] {
				continue
			}
			return Figure{name, f.Unit, func(r *result.Result) float64 {
				for _, s := range r.Services {
					if s.Name == parts[1] && s.LatencyMS != nil {
						return serviceValue(s, f.Name)
					}
				}
				return math.NaN()
			}}, true
		}
	case len(parts) == 4 && parts[0] == "edge":
		for _, f := range edgeFigures {
			if f.Name != parts[3] {
				continue
			}
			return Figure{name, f.Unit, func(r *result.Result) float64 {
				for _, e := range r.Edges {
					if e.From == parts[1] && e.To == parts[2] {
						return edgeValue(e, f.Name)
					}
				}
				return math.NaN()
			}}, true
		}
	}
	return Figure{}, false
}

func serviceValue(s result.Service, name string) float64 {
	switch name {
	case "requests":
		return float64(s.Requests)
	case "errors":
		return float64(s.Errors)
	case "mean_ms":
		return s.LatencyMS.Mean
	}
	return s.LatencyMS.P99
}

func edgeValue(e result.Edge, name string) float64 {
	switch name {
	case "requests":
		return float64(e.Requests)
	case "attempts":
		return float64(e.Attempts)
	case "retries":
		return float64(e.Retries)
	case "errors":
		return float64(e.Errors.Total())
	case "p50_ms":
		return e.LatencyMS.P50
	}
	return e.LatencyMS.P99
}
