package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"trafficlab/resultfile"
)

func newReport(stdout io.Writer) *cobra.Command {
	var output, html, buckets string
	c := &cobra.Command{
		Use:   "report RESULT",
		Short: "Render a saved result (from -o json, or a vegeta attack's results) again, in any format",
		Long: `report reads a result written by 'simulate -o json' (or emulate's, or load's) and
renders it as the text report or another format, without running anything again.

It also reads a real vegeta attack's results, in any of vegeta's encodings (gob as
'vegeta attack' writes it, JSON or CSV as 'vegeta encode' writes them), told apart
by content: what vegeta measured (requests, latencies, errors, bytes), nothing it
did not. A result no run can produce (a negative latency, percentiles out of
order, counts that do not add up) is refused with the field named.`,
		Example: `  trafficlab simulate examples/r1-curl-loop.yaml -o json > result.json
  trafficlab report result.json
  trafficlab report result.json -o vegeta-json
  trafficlab report result.json -o prometheus > metrics.prom
  trafficlab report results.bin -o vegeta-hist --buckets '[0,1ms,10ms,100ms]'
  trafficlab report result.json --html result.html
  vegeta attack -targets targets.txt -duration 30s > results.bin && trafficlab report results.bin`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			render, err := renderer(output)
			if err != nil {
				return err
			}
			var bounds []time.Duration
			if c.Flags().Changed("buckets") {
				if bounds, err = resultfile.ParseBuckets(buckets); err != nil {
					return badInput{fmt.Errorf("--buckets %v", err)}
				}
			}
			r, err := resultfile.ReadBucketed(args[0], bounds)
			if err != nil {
				return badInput{err}
			}
			if html != "" {
				// The result does not carry its scenario: the page says so.
				if err := writeHTML(html, r, nil); err != nil {
					return err
				}
			}
			return render(stdout, r)
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "text", outputHelp)
	c.Flags().StringVar(&buckets, "buckets", "", "histogram `BOUNDS` for -o vegeta-hist and the report, as vegeta report -type=hist[...] takes them:\n'[0,1ms,10ms,100ms]'. Exact for vegeta's results, which hold every latency; a trafficlab\nresult holds only the histogram its run was asked for (spec.report.histogram)")
	c.Flags().StringVar(&html, "html", "", "also write the report as one self-contained HTML page (charts, opens offline) to this file")
	return c
}
