package cli

import (
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"trafficlab/report"
	"trafficlab/result"
)

func newCompare(stdout io.Writer) *cobra.Command {
	var html string
	c := &cobra.Command{
		Use:   "compare A.json B.json [C.json...]",
		Short: "Put saved results side by side, with the changes against the first marked",
		Long: `compare reads two or more results written with -o json and prints them side by side:
throughput, latency percentiles, errors by kind, slow requests, idle pods and the
busiest and least busy pod's share. Each column after the first shows its change
against the first, and * marks a change beyond the row's threshold (stated under the
table). Results of different engines compare the same way (simulate vs emulate), and
a real vegeta attack's results (gob, JSON or CSV, as report reads them) sit beside a
simulation.

--html also writes one self-contained page (it opens offline): the same table, then
the runs' charts overlaid, one colour per file: throughput, errors, latency p99 and
p50 over time since each run's start (runs of different lengths overlay), the latency
percentile spectrum, and each service's pods' shares of its requests, busiest first.`,
		Example: `  trafficlab simulate examples/r1-shared-client-5-threads.yaml -o json > base.json
  trafficlab simulate examples/r1-shared-client-5-threads.yaml --set spec.clients[0].threads=20 -o json > more.json
  trafficlab compare base.json more.json
  trafficlab compare base.json more.json --html compare.html`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			var rs []*result.Result
			var names []string
			for _, path := range args {
				r, err := readResult(path)
				if err != nil {
					return err
				}
				rs = append(rs, r)
				names = append(names, filepath.Base(path))
			}
			if html != "" {
				err := writeFile(html, rs, func(w io.Writer, rs []*result.Result) error { return report.CompareHTML(w, names, rs) })
				if err != nil {
					return err
				}
			}
			return report.Compare(stdout, names, rs)
		},
	}
	c.Flags().StringVar(&html, "html", "", "also write the comparison as one self-contained HTML page (the table and the runs' charts overlaid, opens offline) to this file")
	return c
}
