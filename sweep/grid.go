// Package sweep runs a scenario over a grid of what-ifs: every combination of the
// values given for some scenario paths, each with the same seeds, in parallel. It
// reduces every run to its figures as it finishes, so a sweep's memory grows with
// the grid, not with the runs' length.
package sweep

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"trafficlab/scenario"
)

// Axis is one swept path and its values, as given.
type Axis struct {
	Path   string
	Values []string
}

// ParseSet reads one --set argument of a sweep: PATH=V1,V2,... with any number of
// values. Commas inside brackets, braces or quotes belong to a value, so flow YAML
// such as {a: 1, b: 2} stays whole. A value FROM..TO of two integers stands for every
// integer between them, both included: replicas=2..10.
func ParseSet(arg string) (Axis, error) {
	path, list, ok := strings.Cut(arg, "=")
	if !ok || path == "" {
		return Axis{}, fmt.Errorf("--set %q: want PATH=VALUE[,VALUE...], e.g. spec.services[0].replicas=2,3,4", arg)
	}
	var values []string
	split := splitValues(list)
	for i, v := range split {
		// One empty value is --set's way to unset a field; an empty one among
		// several is a stray comma, which would run a point with the field unset.
		if v == "" && len(split) > 1 {
			return Axis{}, fmt.Errorf("--set %s: value %d of %d is empty; remove the stray comma, or write null to unset the field at a point", arg, i+1, len(split))
		}
		expanded, err := expandRange(v)
		if err != nil {
			return Axis{}, fmt.Errorf("--set %s: %v", arg, err)
		}
		values = append(values, expanded...)
	}
	seen := map[string]bool{}
	for _, v := range values {
		if seen[v] {
			return Axis{}, fmt.Errorf("--set %s: %q is given twice", arg, v)
		}
		seen[v] = true
	}
	return Axis{Path: path, Values: values}, nil
}

// ParseSets reads every --set argument of a sweep: those with several values are
// the axes, those with one are fixed at every point. A path may be given once: a
// second --set of it, swept or fixed, would silently override the first (the table
// would head two columns with one name, one of them a lie), so it is an error.
func ParseSets(args []string) (axes []Axis, fixed []string, err error) {
	first := map[string]string{}
	for _, arg := range args {
		a, err := ParseSet(arg)
		if err != nil {
			return nil, nil, err
		}
		if earlier, ok := first[a.Path]; ok {
			return nil, nil, fmt.Errorf("--set %s: %s is already given by --set %s; give all its values in one --set, e.g. %s=%s",
				arg, a.Path, earlier, a.Path, strings.Join(append(splitValues(strings.TrimPrefix(earlier, a.Path+"=")), splitValues(strings.TrimPrefix(arg, a.Path+"="))...), ","))
		}
		first[a.Path] = arg
		if len(a.Values) == 1 {
			fixed = append(fixed, arg)
		} else {
			axes = append(axes, a)
		}
	}
	return axes, fixed, nil
}

// splitValues splits at the commas outside brackets, braces and quotes.
func splitValues(s string) []string {
	var out []string
	depth, start := 0, 0
	var quote rune
	for i, c := range s {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// maxRange bounds FROM..TO so a typo (2..1000000) fails at once instead of planning
// a million runs.
const maxRange = 1000

func expandRange(v string) ([]string, error) {
	from, to, ok := strings.Cut(v, "..")
	if !ok {
		return []string{v}, nil
	}
	a, errA := strconv.Atoi(from)
	b, errB := strconv.Atoi(to)
	switch {
	case errA != nil || errB != nil:
		return nil, fmt.Errorf("%q: a range is two integers, FROM..TO, e.g. 2..10", v)
	case b < a:
		return nil, fmt.Errorf("%q: the range runs backwards", v)
	case b-a >= maxRange:
		return nil, fmt.Errorf("%q: over %d values; give a coarser list, e.g. 2,4,8,16", v, maxRange)
	}
	var out []string
	for i := a; i <= b; i++ {
		out = append(out, strconv.Itoa(i))
	}
	return out, nil
}

// Point is one combination of the swept values.
type Point struct {
	// Values holds the value of each axis, in the axes' order.
	Values []string
	// Sets are the point's --set arguments, PATH=VALUE, in the axes' order.
	Sets []string
}

// Grid is every combination of the axes' values; the first axis changes slowest.
func Grid(axes []Axis) []Point {
	points := []Point{{}}
	for _, a := range axes {
		var next []Point
		for _, p := range points {
			for _, v := range a.Values {
				next = append(next, Point{
					Values: append(append([]string(nil), p.Values...), v),
					Sets:   append(append([]string(nil), p.Sets...), a.Path+"="+v),
				})
			}
		}
		points = next
	}
	return points
}

// orderers read a swept value as a number in its kind's base unit, so --find can
// say which is smaller. One kind must read every value of an axis: "500m" is half a
// core among quantities but 500 minutes among durations.
var orderers = []struct {
	kind string
	read func(string) (float64, error)
}{
	{"numbers", func(v string) (float64, error) { return strconv.ParseFloat(v, 64) }},
	{"quantities", func(v string) (float64, error) {
		q, err := resource.ParseQuantity(v)
		return q.AsApproximateFloat64(), err
	}},
	{"durations", func(v string) (float64, error) {
		d, err := time.ParseDuration(v)
		return d.Seconds(), err
	}},
	{"percentages", func(v string) (float64, error) {
		p, err := scenario.ParsePercent(v)
		return p.Fraction, err
	}},
	{"rates", func(v string) (float64, error) {
		r, err := scenario.ParseRate(v)
		return r.PerSecond, err
	}},
	{"bandwidths", func(v string) (float64, error) {
		b, err := scenario.ParseBandwidth(v)
		return b.BitsPerSecond, err
	}},
}

// order reads every value of an axis with the first kind that reads them all.
func order(values []string) ([]float64, error) {
next:
	for _, o := range orderers {
		out := make([]float64, len(values))
		for i, v := range values {
			f, err := o.read(v)
			if err != nil {
				continue next
			}
			out[i] = f
		}
		return out, nil
	}
	return nil, fmt.Errorf("values %s do not compare as numbers, quantities, durations, percentages, rates or bandwidths",
		strings.Join(values, ", "))
}
