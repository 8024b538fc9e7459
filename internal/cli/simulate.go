package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"trafficlab/report"
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/sim"
	"trafficlab/simulate"
)

type runFlags struct {
	seed     int64
	duration time.Duration
	sets     []string
	output   string
	timeline string
	html     string
	requests string
	quiet    bool
}

func (f *runFlags) register(c *cobra.Command) {
	c.Flags().Int64Var(&f.seed, "seed", 0, "random seed (overrides spec.seed); same seed, same result")
	c.Flags().DurationVar(&f.duration, "duration", 0, "simulated time to run (overrides spec.duration), e.g. 30s, 5m")
	c.Flags().StringArrayVar(&f.sets, "set", nil, "override a scenario value: --set spec.services[0].replicas=8 (repeatable)")
	c.Flags().StringVarP(&f.output, "output", "o", "text", outputHelp)
	c.Flags().StringVar(&f.timeline, "timeline", "", "also write the per-interval timeline to this CSV file")
	c.Flags().StringVar(&f.html, "html", "", "also write the report as one self-contained HTML page (charts, opens offline) to this file")
	c.Flags().StringVar(&f.requests, "requests", "", "also write every request to this CSV `FILE`, in the columns of vegeta encode --to csv\n(vegeta report and vegeta plot read it); one line per request, so mind long runs")
	c.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar")
}

// write writes a run's result: --timeline and --html files, then the report on
// stdout in the -o format.
func (f *runFlags) write(c *cobra.Command, stdout io.Writer, src source, r *result.Result, render func(io.Writer, *result.Result) error) error {
	if f.timeline != "" {
		if err := writeFile(f.timeline, r, report.TimelineCSV); err != nil {
			return err
		}
	}
	if f.html != "" {
		if err := writeHTML(f.html, r, scenarioText(src, f.overrides(c))); err != nil {
			return err
		}
	}
	return render(stdout, r)
}

// finish writes the result, then ends an interrupted run with its exit status.
func (f *runFlags) finish(c *cobra.Command, stdout io.Writer, src source, r *result.Result, render func(io.Writer, *result.Result) error) error {
	if err := f.write(c, stdout, src, r, render); err != nil {
		return err
	}
	if r.Interrupted {
		return interrupted{covered: covered(r)}
	}
	return nil
}

// covered says how much of the planned run an interrupted result covers.
func covered(r *result.Result) string {
	clock := "simulated"
	if r.Engine != "simulate" {
		clock = "real"
	}
	return fmt.Sprintf("the first %s of the %s planned (%s time)", report.GoDuration(r.DurationS), report.GoDuration(r.PlannedDurationS), clock)
}

// origin records what the run was asked for: the file and the overrides given.
func (f *runFlags) origin(c *cobra.Command, args []string) *result.Origin {
	o := &result.Origin{Sets: f.sets}
	if len(args) > 0 {
		o.File = args[0]
	}
	if c.Flags().Changed("seed") {
		seed := f.seed
		o.Seed = &seed
	}
	if c.Flags().Changed("duration") {
		o.DurationS = f.duration.Seconds()
	}
	return o
}

// overrides is the --set values and those --seed and --duration stand for.
func (f *runFlags) overrides(c *cobra.Command) []string {
	return append(append([]string(nil), f.sets...), sets(flagSets(c, f.seed, f.duration))...)
}

// load loads the scenario with the overrides; diagnostics name --seed and
// --duration as typed.
func (f *runFlags) load(c *cobra.Command, src source, stderr io.Writer) (*scenario.Scenario, scenario.Positions, error) {
	sc, pos, err := loadSource(src, f.overrides(c), stderr)
	return sc, pos, nameFlags(err, flagSets(c, f.seed, f.duration))
}

func newSimulate(stdout, stderr io.Writer) *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "simulate [FILE]",
		Short: "Run a scenario as a deterministic discrete-event simulation",
		Long: `simulate runs a scenario on a simulated cluster: pods on nodes, kube-proxy choosing a
pod for each new connection, clients pooling connections the way their HTTP library
does, pods starting and terminating, the HPA deciding. Lossy or slow links (cluster
network, link overrides, timed faults) run TCP segment by segment as Linux does, and
Envoy sidecars balance per request on their worker threads. It needs no cluster and no
root, and the same scenario and seed always give the same result, byte for byte.

Without FILE it runs the built-in example (` + "`trafficlab examples`" + ` lists them all).
The text report ends with an explanation when the load is spread unevenly or a
sidecar's workers are the bottleneck; spec.report.histogram adds vegeta-style buckets.`,
		Example: `  trafficlab simulate
  trafficlab simulate examples/r1-curl-loop.yaml
  trafficlab simulate scenario.yaml --set spec.services[0].replicas=8 --set spec.cluster.proxyMode=ipvs
  trafficlab simulate scenario.yaml --seed 7 --duration 5m -o json > result.json
  trafficlab simulate scenario.yaml --timeline timeline.csv
  trafficlab simulate scenario.yaml --requests requests.csv && vegeta report < requests.csv
  trafficlab simulate examples/r3-noisy-neighbour.yaml --duration 2h --html r3.html
  trafficlab simulate examples/r4-http2-vs-http1-loss.yaml --set spec.cluster.network.links[0].link.loss=1%
  trafficlab simulate examples/r5-sidecar-concurrency.yaml --set spec.clients[0].sidecar.concurrency=16`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			render, err := renderer(f.output)
			if err != nil {
				return err
			}
			src, err := readSource(args)
			if err != nil {
				return err
			}
			sc, pos, err := f.load(c, src, stderr)
			if err != nil {
				return err
			}
			e, err := buildEngine(sc, pos)
			if err != nil {
				return err
			}
			announceLongRun(stderr, "simulate", simulate.Offered(sc), 1)
			var requests *report.VegetaCSV
			var requestsFile *os.File
			if f.requests != "" {
				if requestsFile, err = os.Create(f.requests); err != nil {
					return err
				}
				defer requestsFile.Close() // on an early return; closed and checked below
				requests = report.NewVegetaCSV(requestsFile)
				e.StreamRequests(requests.Write)
			}
			ctx, stop := interruptible(c.Context())
			defer stop()
			bar := newProgress(stderr, f.quiet)
			e.RunContext(ctx, func(now, end sim.Time) { bar.update(time.Duration(now), time.Duration(end), e.Requests(), "") })
			bar.done()
			if err := e.Err(); err != nil {
				return err
			}
			if requests != nil {
				if err := requests.Flush(); err != nil {
					return err
				}
				if err := requestsFile.Close(); err != nil {
					return err
				}
			}
			r := e.Result()
			r.Origin = f.origin(c, args)
			if stopped, planned := e.Interrupted(); stopped {
				r.Interrupted, r.PlannedDurationS = true, planned.Seconds()
			}
			return f.finish(c, stdout, src, r, render)
		},
	}
	f.register(c)
	return c
}

func writeFile[T any](path string, v T, render func(io.Writer, T) error) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := render(out, v); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// writeHTML writes r as an HTML page to path; doc is the scenario shown in it.
func writeHTML(path string, r *result.Result, doc []byte) error {
	return writeFile(path, r, func(w io.Writer, r *result.Result) error {
		return report.HTML(w, r, report.HTMLOptions{Scenario: doc})
	})
}

// scenarioText is the scenario as run: its document, with the --set overrides
// listed on top.
func scenarioText(src source, sets []string) []byte {
	var head []byte
	for _, s := range sets {
		head = append(head, "# --set "+s+"\n"...)
	}
	return append(head, src.data...)
}
