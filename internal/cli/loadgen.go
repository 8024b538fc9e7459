package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trafficlab/emulate/load"
	"trafficlab/report"
	"trafficlab/result"
	"trafficlab/scenario"
)

// loadFlags are the flags of `trafficlab load`.
type loadFlags struct {
	target, scenario, client string
	dns                      string
	sets                     []string
	threads                  int
	rate, arrival            string
	duration, timeout, think time.Duration
	library, reuse           string
	maxPerHost, maxIdle      int
	idleTimeout, lifetime    time.Duration
	http2                    bool
	maxInFlight              int
	maxRequests              int64
	seed                     int64
	slowThreshold            time.Duration
	httpClient, output       string
	quiet                    bool
	// Emulate's: the client spec as JSON, the pod's name, and a stream of what
	// the run measures on stdout after a start time read from stdin.
	clientJSON, name string
	stream           bool
	// scenarioName and service are --scenario's name and the client's target, set
	// by config, for the Result.
	scenarioName, service string
}

// shaping are the flags that describe the load themselves; with --scenario the
// client spec does, so they are refused there.
var shaping = []string{"threads", "rate", "arrival", "timeout", "think-time", "library", "reuse",
	"max-per-host", "max-idle-per-host", "idle-timeout", "max-lifetime", "http2", "max-in-flight"}

func newLoad(stdout, stderr io.Writer) *cobra.Command {
	var f loadFlags
	c := &cobra.Command{
		Use:   "load --target URL (--threads N | --rate R) [flags]",
		Short: "Send real HTTP load to a target, shaped like a scenario's client",
		Long: `load is trafficlab's load generator: it sends real HTTP requests to --target, the way
one pod of a scenario's client would, and reports which pods answered, how fast and
with what errors, in the simulator's own terms. trafficlab emulate runs it inside a
client pod's network namespace; on its own it tests any HTTP server.

The load is a closed loop (--threads N: each thread sends a request, waits for the
answer, thinks, sends the next) or an open loop (--rate 1000/s, also /m and /h:
requests start on a schedule, evenly spaced or with --arrival poisson, whatever the
answers do). An open loop measures each latency from the request's intended start,
so when the server or a full connection pool holds requests back, the wait shows
instead of being hidden (coordinated omission); an arrival that finds every slot
busy (--max-in-flight) is counted as not sent. A generator short of CPU sends each
arrival it is late for as soon as it can, as vegeta does, and counts those still
unsent at the end as behind schedule.

Connections are pooled the way the client library does (--library, see
'trafficlab libraries'): reuse none (a new connection per request, as curl in a
loop), per-thread (a connection pool per thread) or shared (one pool for the
process), with a cap on connections (--max-per-host), on idle ones, an idle timeout
and a max lifetime after which a connection is replaced. Flags given win over the
library's defaults. --http2 speaks h2c, every request of a pool multiplexed on one
connection.

Each answer names its pod in the X-Trafficlab-Pod header (trafficlab serve sets
it): the report counts answers per pod, and the connections that reached each pod,
which shows a reused connection staying on the pod kube-proxy picked for it.
Failures are named as the simulator names them: timeout, connection_refused,
connection_reset, connection_closed, http_503; anything else is counted as other
and shown.

With --scenario FILE the client spec comes from the scenario (--client NAME when
it has several; --set overrides values as in simulate); --target is where that
client's Service answers. The run ends after --duration (default: the scenario's,
else 10s), when the scenario's phases are done, or after --max-requests.`,
		Example: `  # 5 threads, keep-alive connections shared as Go's http.DefaultClient does
  trafficlab load --target http://127.0.0.1:8080/ --threads 5 --library go-net-http

  # An open loop at 1000 requests per second, Poisson arrivals, 2 s timeout
  trafficlab load --target http://127.0.0.1:8080/ --rate 1000/s --arrival poisson --timeout 2s

  # A new connection per request (curl in a loop), for 30 s, as JSON
  trafficlab load --target http://10.0.0.5/ --threads 1 --reuse none --duration 30s -o json

  # The first client of a scenario, against a server listening locally
  trafficlab load --scenario examples/r1-shared-client-5-threads.yaml --target http://127.0.0.1:8080/`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runLoad(c, &f, stdout, stderr)
		},
	}
	f.register(c)
	return c
}

// runLoad sends the load the flags describe and writes its report.
func runLoad(c *cobra.Command, f *loadFlags, stdout, stderr io.Writer) error {
	cfg, err := f.config(c, stderr)
	if err != nil {
		return err
	}
	if f.output != "text" && f.output != "json" {
		return badInput{fmt.Errorf("-o %q: want text or json", f.output)}
	}
	ctx, stop := interruptible(c.Context())
	defer stop()
	if f.stream {
		fmt.Fprintln(stderr, load.ReadyLine(version))
		return streamLoad(ctx, c.InOrStdin(), stdout, cfg)
	}
	if !f.quiet {
		fmt.Fprintf(stderr, "load: %s → %s for %v (Ctrl-C stops and reports)\n", describeLoad(cfg), cfg.Target, cfg.Duration)
	}
	rep, err := load.Run(ctx, cfg)
	if err != nil {
		return badInput{err}
	}
	return writeLoad(stdout, f.output, rep, cfg, f.scenarioName, f.service)
}

// streamLoad runs the load as emulate's client pod: from the start time read on
// in, streaming what it measures on out (load.Stream), its report last, also when
// interrupted.
func streamLoad(ctx context.Context, in io.Reader, out io.Writer, cfg load.Config) error {
	// A pod deleted while it waits (SIGTERM) ends at once, as a stopped run does.
	read := make(chan error, 1)
	var startNS int64
	go func() {
		_, err := fmt.Fscanln(in, &startNS)
		read <- err
	}()
	select {
	case err := <-read:
		if err != nil {
			return badInput{fmt.Errorf("--stream: reading the start time from stdin: %w", err)}
		}
	case <-ctx.Done():
		return interrupted{covered: "nothing: the load had not started"}
	}
	cfg.Start = time.Unix(0, startNS)
	st := load.NewStream(out)
	cfg.OnInterval = st.Interval
	rep, err := load.Run(ctx, cfg)
	if err != nil {
		return badInput{err}
	}
	return st.Report(rep)
}

// register defines load's flags.
func (f *loadFlags) register(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&f.target, "target", "", "URL to send requests to: http://HOST:PORT/PATH (required)")
	fl.StringVar(&f.dns, "dns", "", "DNS server IP:PORT that resolves the target's host name (default: the system's);\nthe library's DNS cache and address order apply (see 'trafficlab libraries')")
	fl.IntVar(&f.threads, "threads", 0, "closed loop: this many threads, each waiting for its answer before the next request")
	fl.StringVar(&f.rate, "rate", "", "open loop: requests per second, minute or hour: 1000/s, 60/m, 3600/h")
	fl.StringVar(&f.arrival, "arrival", scenario.ArrivalConstant, "open-loop arrivals: constant (evenly spaced) or poisson")
	fl.DurationVar(&f.duration, "duration", 0, "how long to send, e.g. 10s, 2m (default: the scenario's duration, else 10s)")
	fl.DurationVar(&f.timeout, "timeout", 0, "timeout of one request, sending to last byte (default: the library's, else 30s)")
	fl.DurationVar(&f.think, "think-time", 0, "closed loop: pause after each answer")
	fl.StringVar(&f.library, "library", "", "client library whose pooling defaults to use: go-net-http, dotnet-httpclient, fortio, ...\n(see 'trafficlab libraries')")
	fl.StringVar(&f.reuse, "reuse", "", "connection reuse: none (a new one per request), per-thread or shared (default: the library's, else shared)")
	fl.IntVar(&f.maxPerHost, "max-per-host", 0, "most connections in a pool, busy or idle; requests beyond wait (0 = unlimited)")
	fl.IntVar(&f.maxIdle, "max-idle-per-host", 0, "most idle connections kept in a pool; extra ones close after use (0 = unlimited)")
	fl.DurationVar(&f.idleTimeout, "idle-timeout", 0, "close connections idle this long (0 = never)")
	fl.DurationVar(&f.lifetime, "max-lifetime", 0, "replace connections this old when next used (0 = never)")
	fl.BoolVar(&f.http2, "http2", false, "speak HTTP/2 without TLS (h2c, prior knowledge)")
	fl.IntVar(&f.maxInFlight, "max-in-flight", 0, "open loop: most requests in flight; arrivals beyond are not sent (0 = unbounded)")
	fl.Int64Var(&f.maxRequests, "max-requests", 0, fmt.Sprintf("stop after sending this many requests (0 = %d)", load.DefaultMaxRequests))
	fl.Int64Var(&f.seed, "seed", 0, "random seed of arrivals and think times (default: the scenario's)")
	fl.DurationVar(&f.slowThreshold, "slow-threshold", 0, "count the answers slower than this, per pod and per interval, in the JSON (as a\nscenario's report.slowThreshold; emulate and cluster pass it); 0 counts none")
	fl.StringVar(&f.scenario, "scenario", "", "take the client spec from this scenario file")
	fl.StringVar(&f.client, "client", "", "with --scenario: the client's name (default: its only client)")
	fl.StringArrayVar(&f.sets, "set", nil, "with --scenario: override a scenario value, --set spec.clients[0].threads=8 (repeatable)")
	fl.StringVar(&f.httpClient, "http-client", load.ClientTrafficlab, "HTTP/1.1 client: trafficlab (fast, pools as the library profile says)\nor net/http (Go's Transport, Go's own pooling, about half the rate); HTTP/2 always uses net/http")
	fl.StringVarP(&f.output, "output", "o", "text", "report format: text, or json (the Result every engine writes: report and compare read it)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no start line on stderr")
	fl.StringVar(&f.clientJSON, "client-json", "", "the client spec as emulate passes it: scenario.Client in JSON")
	fl.StringVar(&f.name, "name", "", "with --client-json: the client pod's name, which seeds its random streams")
	fl.BoolVar(&f.stream, "stream", false, "emulate's client pod: wait for a start time (Unix ns) on stdin, then stream the run as JSON lines on stdout")
	for _, name := range []string{"client-json", "name", "stream"} {
		_ = fl.MarkHidden(name)
	}
}

// config turns the flags into a load.Config; every problem is bad input.
func (f *loadFlags) config(c *cobra.Command, stderr io.Writer) (load.Config, error) {
	bad := func(format string, a ...any) (load.Config, error) {
		return load.Config{}, badUsage(c, fmt.Errorf(format, a...))
	}
	changed := c.Flags().Changed
	if f.target == "" {
		return bad("--target is required: the URL to send requests to, e.g. --target http://127.0.0.1:8080/")
	}
	var (
		client   *scenario.Client
		duration = 10 * time.Second
		seed     = f.seed
	)
	if changed("name") && f.clientJSON == "" {
		return bad("--name goes with --client-json")
	}
	if f.clientJSON != "" {
		if f.scenario != "" {
			return bad("--client-json goes without --scenario")
		}
		client = &scenario.Client{}
		if err := json.Unmarshal([]byte(f.clientJSON), client); err != nil {
			return bad("--client-json: %v", err)
		}
	} else if f.scenario != "" {
		for _, name := range shaping {
			if changed(name) {
				return bad("--%s cannot be used with --scenario: the client spec sets it (use --set spec.clients[N]....)", name)
			}
		}
		sc, _, err := loadScenario([]string{f.scenario}, f.sets, stderr)
		if err != nil {
			return load.Config{}, err
		}
		if client, err = pickClient(sc, f.client); err != nil {
			return load.Config{}, badInput{err}
		}
		duration = sc.Spec.Duration.Duration
		f.scenarioName, f.service = sc.Metadata.Name, client.Target
		if !changed("seed") {
			seed = sc.Spec.Seed
		}
	} else {
		if changed("client") || changed("set") {
			return bad("--client and --set need --scenario")
		}
		var err error
		if client, err = f.clientSpec(changed); err != nil {
			return bad("%v", err)
		}
	}
	if changed("duration") {
		duration = f.duration
	}
	cfg, err := load.FromClient(client, f.target, duration, seed)
	if err != nil {
		return bad("%v", err)
	}
	cfg.MaxRequests = f.maxRequests
	cfg.DNS = f.dns
	cfg.SlowThreshold = f.slowThreshold
	if f.name != "" {
		cfg.Name = f.name
	}
	if changed("http-client") || cfg.Conn.Protocol != scenario.ProtocolHTTP2 {
		cfg.HTTPClient = f.httpClient
	}
	return cfg, nil
}

// clientSpec is the client the flags describe, as a scenario would write it, so
// that the library's defaults fill what the flags leave out exactly as there.
func (f *loadFlags) clientSpec(changed func(string) bool) (*scenario.Client, error) {
	cl := &scenario.Client{Name: "load", Library: f.library, Arrival: f.arrival, MaxInFlight: f.maxInFlight}
	switch {
	case changed("threads") && changed("rate"):
		return nil, errors.New("give --threads or --rate, not both")
	case changed("rate"):
		r, err := scenario.ParseRate(f.rate)
		if err != nil {
			return nil, fmt.Errorf("--rate: %v", err)
		}
		cl.Rate = &r
	case f.threads > 0:
		cl.Threads = f.threads
	default:
		return nil, errors.New("give --threads N (a closed loop) or --rate R, e.g. 1000/s (an open loop)")
	}
	if changed("arrival") && cl.Rate == nil {
		return nil, errors.New("--arrival needs --rate")
	}
	if changed("timeout") {
		cl.Timeout = &metav1.Duration{Duration: f.timeout}
	}
	if f.think > 0 {
		cl.ThinkTime = &scenario.Distribution{Distribution: scenario.DistConstant, Value: metav1.Duration{Duration: f.think}}
	}
	conn := &cl.Connections
	conn.Reuse = f.reuse
	if f.http2 {
		conn.Protocol = scenario.ProtocolHTTP2
	}
	if changed("max-per-host") {
		conn.MaxPerHost = &f.maxPerHost
	}
	if changed("max-idle-per-host") {
		conn.MaxIdlePerHost = &f.maxIdle
	}
	if changed("idle-timeout") {
		conn.IdleTimeout = &metav1.Duration{Duration: f.idleTimeout}
	}
	if changed("max-lifetime") {
		conn.MaxLifetime = &metav1.Duration{Duration: f.lifetime}
	}
	return cl, nil
}

// pickClient is the scenario's client called name, or its only one.
func pickClient(sc *scenario.Scenario, name string) (*scenario.Client, error) {
	var names []string
	for i := range sc.Spec.Clients {
		c := &sc.Spec.Clients[i]
		if c.Name == name || (name == "" && len(sc.Spec.Clients) == 1) {
			return c, nil
		}
		names = append(names, c.Name)
	}
	if name == "" {
		return nil, fmt.Errorf("the scenario has %d clients; pick one with --client (%s)", len(names), strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("the scenario has no client %q; its clients: %s", name, strings.Join(names, ", "))
}

// describeLoad is the start line's summary of the load.
func describeLoad(cfg load.Config) string {
	var parts []string
	for _, p := range cfg.Phases {
		switch {
		case p.Rate > 0:
			parts = append(parts, scenario.Rate{PerSecond: p.Rate}.String())
		default:
			parts = append(parts, fmt.Sprintf("%d threads", p.Threads))
		}
	}
	s := strings.Join(parts, ", ")
	if cfg.Library != "" {
		s += " as " + cfg.Library
	}
	return s + ", " + cfg.Conn.Reuse + " connections, " + cfg.Conn.Protocol
}

// writeLoad writes the report in format (text or json) and ends a run a signal
// stopped (its end reason canceled) with its exit status, as simulate's: the JSON
// marks it interrupted, the text says so first. planned is the duration it was to run.
func writeLoad(w io.Writer, format string, r *load.Report, cfg load.Config, scenarioName, service string) error {
	stopped := r.EndReason == "canceled"
	planned := cfg.Duration
	if format == "json" {
		// The Result, as every engine writes it: report and compare read it.
		out := loadResult(r, cfg, scenarioName, service)
		if stopped {
			out.Interrupted, out.PlannedDurationS = true, planned.Seconds()
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		if stopped {
			fmt.Fprintf(w, "Interrupted after %s of the %s planned: every figure covers the time that ran.\n\n",
				report.GoDuration(r.DurationS), report.GoDuration(planned.Seconds()))
		}
		if err := writeLoadText(w, r); err != nil {
			return err
		}
	}
	if stopped {
		return interrupted{covered: fmt.Sprintf("the first %s of the %s planned", report.GoDuration(r.DurationS), report.GoDuration(planned.Seconds()))}
	}
	return nil
}

// writeLoadText is the report for people.
func writeLoadText(w io.Writer, r *load.Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, a ...any) { fmt.Fprintf(tw, format+"\n", a...) }
	pool := r.Pool
	lib := ""
	if r.Library != "" {
		lib = " (library " + r.Library + ")"
	}
	p("Target\t%s", r.Target)
	p("Load\t%s%s", r.Load, lib)
	p("Pool\t%s, %s, max per host %s, max idle %s, idle timeout %s, max lifetime %s", pool.Reuse, pool.Protocol,
		limit(pool.MaxPerHost), limit(pool.MaxIdlePerHost), seconds0(pool.IdleTimeoutS), seconds0(pool.MaxLifetimeS))
	p("Ran\t%.2fs, ended by %s", r.DurationS, r.EndReason)
	q := r.Requests
	p("Requests\t%d answered, %d failed, %d in flight at the end, %d not sent, %d resent", q.OK, q.Failed, q.InFlight, q.NotSent, q.Retried)
	if q.Behind > 0 || r.MaxLateS > 0 {
		p("Schedule\t%d of %d due sent, %d never sent (behind schedule), the latest %s after its time", r.Sent, r.Due, q.Behind, report.GoDuration(r.MaxLateS))
	}
	p("Throughput\t%.1f/s answered, %.1f/s sent", r.ThroughputRPS, r.RateRPS)
	kinds := make([]string, 0, result.ErrorKinds)
	for _, k := range report.ShownKinds(r.Errors) {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, r.Errors.Of(k)))
	}
	p("Errors\t%s", strings.Join(kinds, ", "))
	others := make([]string, 0, len(r.OtherErrors))
	for k := range r.OtherErrors {
		others = append(others, k)
	}
	slices.Sort(others)
	for i, k := range others {
		label := ""
		if i == 0 {
			label = "Other errors"
		}
		p("%s\t%d × %s", label, r.OtherErrors[k], k)
	}
	l := r.LatencyMS
	p("Latency ms\tmin %g, mean %g, p50 %g, p90 %g, p95 %g, p99 %g, p99.9 %g, max %g", l.Min, l.Mean, l.P50, l.P90, l.P95, l.P99, l.P999, l.Max)
	cs := r.Connections
	p("Connections\t%d opened (%d at most at once), %d dial failures, %d replaced for age, %d reached more than one pod",
		cs.Opened, cs.PeakOpen, cs.DialFailures, cs.Retired, cs.Unpinned)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Pods) == 0 {
		_, err := fmt.Fprintf(w, "\nNo answer named a pod (%d without the %s header).\n", r.NoPodHeader, load.PodHeader)
		return err
	}
	fmt.Fprintf(w, "\nPods: %d reached\n", r.PodsReached)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "POD\tREQUESTS\tSHARE\tCONNECTIONS\tERRORS\t")
	var total int64
	for _, pd := range r.Pods {
		total += pd.Requests
	}
	for _, pd := range r.Pods {
		fmt.Fprintf(tw, "%s\t%d\t%.1f%%\t%d\t%d\t\n", pd.Name, pd.Requests, 100*float64(pd.Requests)/float64(max(total, 1)), pd.Connections, pd.Errors)
	}
	if r.NoPodHeader > 0 {
		fmt.Fprintf(tw, "(no %s header)\t%d\t\t\t\t\n", load.PodHeader, r.NoPodHeader)
	}
	return tw.Flush()
}

// loadResult is the Result of engine "load" from what one load generator measured,
// as emulate fills a client pod's share of one (emulate/result.go): counts,
// latencies, the timeline and the pods that answered, by their X-Trafficlab-Pod
// header, under service (the scenario client's target, or the target's host). It
// claims nothing load does not measure: no nodes, no CPU, no pod lifecycle, no
// replicas over time. Failures no kind describes count in requests.failed only.
func loadResult(rep *load.Report, cfg load.Config, scenarioName, service string) *result.Result {
	if service == "" {
		if u, err := url.Parse(cfg.Target); err == nil {
			service = u.Host
		}
	}
	r := &result.Result{
		Engine: "load", Scenario: scenarioName, Seed: rep.Seed, DurationS: rep.DurationS,
		Requests: rep.Requests, Errors: rep.Errors, ThroughputRPS: rep.ThroughputRPS, RateRPS: rep.RateRPS,
		LatencyMS: rep.LatencyMS, LatencySpectrum: rep.LatencySpectrum, TimelineIntervalS: rep.TimelineIntervalS,
		Ended: rep.Ended,
	}
	for _, p := range rep.Pods {
		r.Pods = append(r.Pods, result.Pod{Name: p.Name, Service: service, Requests: p.Requests, Connections: p.Connections})
	}
	c := result.Client{
		Name: cfg.Name, Target: service, Replicas: 1, Library: cfg.Library, Reuse: cfg.Conn.Reuse,
		MaxPerHost: cfg.Conn.MaxPerHost, MaxIdle: cfg.Conn.MaxIdlePerHost, MaxLifetimeS: cfg.Conn.MaxLifetime.Seconds(),
		ConnectionsOpened: rep.Connections.Opened, PeakOpen: rep.Connections.PeakOpen, OpenAtEnd: rep.Connections.OpenAtEnd,
		PodsReached: rep.PodsReached, Requests: rep.Requests.Total, Errors: rep.Requests.Failed, RunsAborted: rep.RunsAborted,
		Sent: rep.Sent, Due: rep.Due, Behind: rep.Requests.Behind, MaxLateS: rep.MaxLateS,
	}
	if len(cfg.Phases) == 1 && cfg.Repeat <= 1 {
		c.Threads, c.RatePerPod = cfg.Phases[0].Threads, cfg.Phases[0].Rate
	}
	r.Clients = []result.Client{c}
	for _, p := range rep.Timeline {
		pt := result.Point{TS: p.TS, Requests: p.Requests, Errors: p.Errors,
			P50MS: p.P50MS, P90MS: p.P90MS, P99MS: p.P99MS, P999MS: p.P999MS, PodRequests: p.PodRequests}
		for kind, n := range p.ErrorsByKind {
			if pt.ErrorsByKind == nil {
				pt.ErrorsByKind = &result.Errors{}
			}
			if k, ok := result.ErrorKindNamed(kind); ok { // "other" counts in the totals only
				pt.ErrorsByKind.Add(k, n)
			}
		}
		r.Timeline = append(r.Timeline, pt)
	}
	return r
}

// seconds0 writes a duration in seconds, 0 as never.
func seconds0(s float64) string {
	if s == 0 {
		return "never"
	}
	return (time.Duration(s * float64(time.Second))).String()
}
