package cli

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"trafficlab/report"
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/sim"
	"trafficlab/simulate"
	"trafficlab/sweep"
)

type sweepFlags struct {
	seed     int64
	duration time.Duration
	sets     []string
	seeds    int
	find     string
	output   string
	csv      string
	json     string
	parallel int
	quiet    bool
}

var sweepFormats = map[string]func(io.Writer, *result.Sweep) error{
	"text": report.SweepText,
	"json": report.SweepJSON,
	"csv":  report.SweepCSV,
}

func newSweep(stdout, stderr io.Writer) *cobra.Command {
	var f sweepFlags
	c := &cobra.Command{
		Use:   "sweep [FILE] --set PATH=V1,V2,... [--set ...]",
		Short: "Run a scenario over a grid of what-ifs, in parallel, and tabulate the figures",
		Long: `sweep runs a scenario once for every combination of the values given with --set
(PATH=V1,V2,V3; FROM..TO for a range of integers) and prints one row per combination:
throughput, latency percentiles, errors by kind, idle pods and the busiest and
quietest pod's share. A --set with one value applies to every point. Each path may
be given by one --set only: two, swept or fixed, are an error, not an override; so
are --seed or --duration beside a --set of spec.seed or spec.duration.

The runs share the machine's cores (--parallel). Each run's seed depends only on its
repeat: every point runs with spec.seed, spec.seed+1, ... (--seeds N), so points differ
by the values swept and not by luck, and the table is the same on any machine.
With --seeds above 1 each cell is the mean ± the sample standard deviation.

--find answers a capacity question over the grid:
  "min PATH where FIGURE OP VALUE [and ...]" (or max), PATH one of the swept paths.
  FIGURE: p50 p90 p99 p99.9 max (latencies: 50ms), errors timeout refused reset
  closed 503 requests idle (counts), rps (a number or 1000/s), slow max_pod_share
  min_pod_share (percentages: 30%). OP: < <= > >= == !=. A value answers only if
  every condition holds on every seed; with other swept paths there is one answer
  per combination of theirs.`,
		Example: `  trafficlab sweep examples/r1-shared-client-5-threads.yaml --set spec.services[0].replicas=2..8
  trafficlab sweep scenario.yaml --set spec.services[0].replicas=2,4,8 --set spec.clients[0].threads=5,20 --seeds 5
  trafficlab sweep scenario.yaml --set spec.services[0].replicas=1..12 \
      --find "min spec.services[0].replicas where p99 < 50ms and errors == 0"
  trafficlab sweep scenario.yaml --set spec.cluster.proxyMode=iptables,ipvs,userspace --csv runs.csv --json sweep.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runSweep(c, args, &f, stdout, stderr)
		},
	}
	fl := c.Flags()
	fl.Int64Var(&f.seed, "seed", 0, "the first seed (overrides spec.seed)")
	fl.DurationVar(&f.duration, "duration", 0, "simulated time of each run (overrides spec.duration), e.g. 30s, 5m")
	fl.StringArrayVar(&f.sets, "set", nil, "PATH=V1,V2,... values to sweep, or PATH=VALUE for every point (repeatable)")
	fl.IntVar(&f.seeds, "seeds", 1, "runs per point, with seeds spec.seed, spec.seed+1, ...")
	fl.StringVar(&f.find, "find", "", `answer "min|max PATH where CONDITION [and ...]" over the grid`)
	fl.StringVarP(&f.output, "output", "o", "text", "format on stdout: text (the table), json (every run's figures and the summary) or csv (one row per run)")
	fl.StringVar(&f.csv, "csv", "", "also write one row per run to this CSV file")
	fl.StringVar(&f.json, "json", "", "also write the sweep as JSON to this file")
	// A zero default keeps pflag from printing "(default N)" beside the usage's own
	// default, which is the machine's core count and not a constant.
	fl.IntVarP(&f.parallel, "parallel", "j", 0, "runs at once (default: one per core)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar and no timing line")
	return c
}

func runSweep(c *cobra.Command, args []string, f *sweepFlags, stdout, stderr io.Writer) error {
	render, ok := sweepFormats[f.output]
	if !ok {
		return badInput{fmt.Errorf("-o %q: want text, json or csv", f.output)}
	}
	if !c.Flags().Changed("parallel") {
		f.parallel = runtime.GOMAXPROCS(0)
	}
	if f.seeds < 1 || f.parallel < 1 {
		return badInput{fmt.Errorf("--seeds and --parallel must be at least 1")}
	}
	axes, fixed, err := sweep.ParseSets(f.sets)
	if err != nil {
		return badInput{err}
	}
	flags := flagSets(c, f.seed, f.duration)
	if err := checkFlagsNotSet(flags, f.sets); err != nil {
		return err
	}
	fixed = append(fixed, sets(flags)...)
	var query *sweep.Query
	// An empty --find is a mistake to report, not a query to skip.
	if c.Flags().Changed("find") {
		q, err := sweep.ParseQuery(f.find, axes)
		if err != nil {
			return badInput{err}
		}
		query = &q
	}
	points := sweep.Grid(axes)
	src, err := readSource(args)
	if err != nil {
		return err
	}
	r := &sweepRunner{src: src, runs: len(points) * f.seeds}
	offered, err := r.plan(points, fixed, flags, f.seeds, stderr)
	if err != nil {
		return err
	}
	announceLongRun(stderr, "sweep", offered, min(f.parallel, len(points)*f.seeds))

	r.bar = newProgress(stderr, f.quiet)
	ctx, stop := interruptible(c.Context())
	defer stop()
	started := time.Now()
	sw, err := sweep.Run(ctx, axes, fixed, points, f.seeds, f.parallel, func(point, repeat int) (*result.Result, error) {
		return r.run(ctx, point, repeat)
	})
	r.bar.done()
	if err != nil {
		return err
	}
	if sw.Interrupted && sw.Scenario == "" {
		// No run finished to name the sweep: name it from its first point's plan.
		sw.Engine, sw.Scenario, sw.DurationS = "simulate", r.plans[0].name, r.plans[0].duration.Seconds()
	}
	if !f.quiet {
		fmt.Fprintln(stderr, sweepTiming(int64(r.finished.Load()), r.requests.Load(), time.Since(started), min(f.parallel, r.runs)))
	}
	if len(args) > 0 {
		sw.File = args[0]
	}
	if query != nil && !sw.Interrupted {
		if unknown := query.Unknown(sw); len(unknown) > 0 {
			return badInput{fmt.Errorf("--find: no run has %s: the scenario has no such service or call; its services' and calls' figures are %s",
				strings.Join(unknown, ", "), graphFigureNames(sw))}
		}
		sw.Find = query.Answer(sw, axes)
	}
	return writeSweep(sw, f, render, stdout)
}

// graphFigureNames lists the service and call figures of the sweep's first run.
func graphFigureNames(sw *result.Sweep) string {
	var names []string
	if len(sw.Points) > 0 && len(sw.Points[0].Runs) > 0 {
		for name := range sw.Points[0].Runs[0].Figures {
			if strings.HasPrefix(name, "service.") || strings.HasPrefix(name, "edge.") {
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		return "none: no service calls another"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// checkFlagsNotSet refuses --seed or --duration on a path a --set also gives: they
// are --sets of their own, and one would silently win over the other, or lose to it.
func checkFlagsNotSet(flags []scenario.FlagSet, setArgs []string) error {
	for _, fl := range flags {
		path, _, _ := strings.Cut(fl.Set, "=")
		for _, s := range setArgs {
			if p, _, _ := strings.Cut(s, "="); p == path {
				return badInput{fmt.Errorf("%s and --set %s both give %s; give one", fl.Flag, s, path)}
			}
		}
	}
	return nil
}

// writeSweep writes the sweep to the --csv and --json files and in the -o format to
// stdout; an interrupted sweep's error says which points the output covers.
func writeSweep(sw *result.Sweep, f *sweepFlags, render func(io.Writer, *result.Sweep) error, stdout io.Writer) error {
	for _, out := range []struct {
		path   string
		render func(io.Writer, *result.Sweep) error
	}{{f.csv, report.SweepCSV}, {f.json, report.SweepJSON}} {
		if out.path != "" {
			if err := writeFile(out.path, sw, out.render); err != nil {
				return err
			}
		}
	}
	if err := render(stdout, sw); err != nil {
		return err
	}
	if sw.Interrupted {
		return interrupted{covered: fmt.Sprintf("the %d of %d points whose every run finished", len(sw.Points), sw.PlannedPoints)}
	}
	return nil
}

// sweepRunner runs a sweep's points, each on its plan, and counts their progress
// across the workers.
type sweepRunner struct {
	src   source
	plans []sweepPlan
	total time.Duration // simulated time of every run
	runs  int
	bar   *progress

	simulated, requests atomic.Int64
	finished            atomic.Int32
}

// plan checks every point before any runs, so a bad value fails in a second, not
// after an hour of the others, and returns the requests the whole sweep offers.
// Warnings repeat across points: each is shown once.
func (r *sweepRunner) plan(points []sweep.Point, fixed []string, flags []scenario.FlagSet, seeds int, stderr io.Writer) (offered float64, err error) {
	warnings := &onceLines{w: stderr}
	r.plans = make([]sweepPlan, len(points))
	for i, p := range points {
		sets := append(append([]string(nil), fixed...), p.Sets...)
		sc, _, err := loadSource(r.src, sets, warnings)
		if err != nil {
			return 0, nameFlags(err, flags)
		}
		r.plans[i] = sweepPlan{sets: sets, name: sc.Metadata.Name, seed: sc.Spec.Seed, duration: sc.Spec.Duration.Duration}
		r.total += time.Duration(seeds) * r.plans[i].duration
		offered += float64(seeds) * simulate.Offered(sc)
	}
	return offered, nil
}

// run simulates one repeat of a point, with the point's seed plus repeat; an
// interrupted run returns a Result that says only that.
func (r *sweepRunner) run(ctx context.Context, point, repeat int) (*result.Result, error) {
	plan := r.plans[point]
	sets := append(append([]string(nil), plan.sets...), fmt.Sprintf("spec.seed=%d", plan.seed+int64(repeat)))
	sc, pos, err := loadSource(r.src, sets, io.Discard)
	if err != nil {
		return nil, err
	}
	e, err := buildEngine(sc, pos)
	if err != nil {
		return nil, err
	}
	var lastT sim.Time
	var lastN int64
	e.RunContext(ctx, func(now, end sim.Time) {
		r.simulated.Add(int64(now - lastT))
		r.requests.Add(e.Requests() - lastN)
		lastT, lastN = now, e.Requests()
		r.bar.update(time.Duration(r.simulated.Load()), r.total, r.requests.Load(),
			fmt.Sprintf("%d/%d runs", r.finished.Load(), r.runs))
	})
	if stopped, _ := e.Interrupted(); stopped {
		return &result.Result{Interrupted: true}, nil
	}
	r.finished.Add(1)
	if err := e.Err(); err != nil {
		return nil, err
	}
	return e.Result(), nil
}

// sweepPlan is a point's --set arguments and what its scenario says of its runs.
type sweepPlan struct {
	sets     []string
	name     string
	seed     int64
	duration time.Duration
}

// onceLines writes each distinct line once: the same warning from twenty points is
// one warning.
type onceLines struct {
	w    io.Writer
	mu   sync.Mutex
	seen map[string]bool
}

func (o *onceLines) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seen == nil {
		o.seen = map[string]bool{}
	}
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line != "" && !o.seen[line] {
			o.seen[line] = true
			if _, err := io.WriteString(o.w, line); err != nil {
				return 0, err
			}
		}
	}
	return len(b), nil
}

// sweepTiming is the line after a sweep: how many runs took how long, and the
// simulated requests per wall second, a rate only over runs that finished.
func sweepTiming(runs, requests int64, wall time.Duration, workers int) string {
	line := fmt.Sprintf("%s in %s on %s", count(runs, "run"), wall.Round(10*time.Millisecond), count(workers, "worker"))
	if runs == 0 || wall <= 0 {
		return line
	}
	return line + ": " + perWallSecond(requests, wall) + " simulated requests per wall second"
}
