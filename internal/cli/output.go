package cli

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"trafficlab/report"
	"trafficlab/result"
	"trafficlab/resultfile"
)

// formats are the renderings of a Result that -o names.
var formats = map[string]func(io.Writer, *result.Result) error{
	"text":        report.Text,
	"json":        report.JSON,
	"vegeta-json": report.VegetaJSON,
	"vegeta-hist": report.VegetaHist,
	"prometheus":  report.Prometheus,
}

const outputHelp = `report format:
  text         the summary with explanations (default)
  json         the Result, every field (the input of report and compare)
  vegeta-json  vegeta's JSON report: latencies in ns, status codes, errors
  vegeta-hist  vegeta's hist table of the histogram's buckets (spec.report.histogram, or report --buckets)
  prometheus   the final counters in Prometheus text format`

// renderer is the -o format's renderer, or a bad-input error naming the choices.
// A format the result lacks the data for (vegeta-hist without buckets, vegeta-json
// without every request's summary) is bad input.
func renderer(name string) (func(io.Writer, *result.Result) error, error) {
	if f, ok := formats[name]; ok {
		return func(w io.Writer, r *result.Result) error {
			err := f(w, r)
			if errors.Is(err, report.ErrNoHistogram) || errors.Is(err, report.ErrNotEveryRequest) {
				return badInput{err}
			}
			return err
		}, nil
	}
	names := make([]string, 0, len(formats))
	for n := range formats {
		names = append(names, n)
	}
	sort.Strings(names)
	return nil, badInput{fmt.Errorf("-o %q: want one of %s", name, strings.Join(names, ", "))}
}

// readResult reads a run for report and compare: a Result written with -o json,
// or a real vegeta attack's results (resultfile.Read); a file that is neither, or a
// run that cannot be, is bad input.
func readResult(path string) (*result.Result, error) {
	r, err := resultfile.Read(path)
	if err != nil {
		return nil, badInput{err}
	}
	return r, nil
}
