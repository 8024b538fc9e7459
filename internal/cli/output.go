package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"trafficlab/report"
	"trafficlab/result"
	"trafficlab/resultfile"
)

// formats are the renderings of a Result that -o names, in the order -o's help lists
// them. The help and the choice both read this table, so neither can name a format
// the other lacks.
var formats = []struct {
	name, help string
	write      func(io.Writer, *result.Result) error
}{
	{"text", "the summary with explanations (default)", report.Text},
	{"json", "the Result, every field (the input of report and compare)", report.JSON},
	{"vegeta-json", "vegeta's JSON report: latencies in ns, status codes, errors", report.VegetaJSON},
	{"vegeta-hist", "vegeta's hist table of the histogram's buckets (spec.report.histogram, or report --buckets)", report.VegetaHist},
	{"prometheus", "the final counters in Prometheus text format", report.Prometheus},
}

// outputHelp is -o's help: a line for each format, descriptions aligned.
var outputHelp = func() string {
	width := 0
	for _, f := range formats {
		width = max(width, len(f.name))
	}
	var b strings.Builder
	b.WriteString("report format:")
	for _, f := range formats {
		fmt.Fprintf(&b, "\n  %-*s  %s", width, f.name, f.help)
	}
	return b.String()
}()

// renderer is the -o format's renderer, or a bad-input error naming the choices.
// A format the result lacks the data for (vegeta-hist without buckets, vegeta-json
// without every request's summary) is bad input.
func renderer(name string) (func(io.Writer, *result.Result) error, error) {
	for _, f := range formats {
		if f.name == name {
			return func(w io.Writer, r *result.Result) error {
				err := f.write(w, r)
				if errors.Is(err, report.ErrNoHistogram) || errors.Is(err, report.ErrNotEveryRequest) {
					return badInput{err}
				}
				return err
			}, nil
		}
	}
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.name
	}
	slices.Sort(names)
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
