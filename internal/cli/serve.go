package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"trafficlab/emulate/serve"
	"trafficlab/scenario"
)

type serveFlags struct {
	podSpec    string
	podJSON    string
	scenario   string
	service    string
	sets       []string
	listen     string
	name       string
	seed       int64
	work       string
	readyAfter time.Duration
	fullBurn   bool
	grpc       bool
	dns        string
	calls      []string
	figures    string
}

func newServe(stdout, stderr io.Writer) *cobra.Command {
	var f serveFlags
	c := &cobra.Command{
		Use:   "serve",
		Short: "Run one pod's app: the HTTP server emulate starts in every pod",
		Long: `serve is the app of one pod of a scenario, for real: emulate starts it in each pod's
network namespace, and it runs as well alone on loopback, to try a pod spec with curl,
wrk or h2load.

It answers HTTP/1.1 and cleartext HTTP/2 (h2c with prior knowledge) on one port. Each
request takes one of the app's worker threads (pod.concurrency; 0 = unbounded; when all
are busy, requests wait in arrival order), draws pod.serviceTime and burns that much
CPU, counted on the thread's own CPU clock: under a CPU limit the kernel's CFS quota
stretches the wall time as it does in Kubernetes. Then it waits pod.waitTime off the
CPU, and answers 200 with pod.responseBytes bytes (status line and headers included)
and the header X-Trafficlab-Pod naming the pod. --work sleep waits the service time
out instead of burning it: no CPU used, no CPU limit felt.

pod.serviceTime is a request's whole CPU work, HTTP stack included, as simulate
counts it. serve measures what its own stack costs a request (the process's CPU
beside the burns, renewed every 250ms) and burns only the rest; at exit it prints
that cost on stderr. --full-burn burns the whole service time on top of it.

/healthz/ready answers 200, or 503 before --ready-after has passed and after SIGTERM;
/healthz/live answers 200. Neither waits for a worker.

SIGTERM does what pod.onSigterm says. exit: the process ends at once; a request in
service reads EOF, one waiting for a worker gets a reset. drain: new connections are
refused, idle ones closed, HTTP/2 ones get GOAWAY; requests in progress finish and are
answered with Connection: close; the process exits when nothing is left, at
onSigterm.drainTimeout, or when the kubelet would SIGKILL it (the grace period less
the preStop hook, at least 2s), whichever comes first. The preStop hook itself is the
kubelet's: send SIGTERM once it is over. An interrupt (Ctrl-C) counts as SIGTERM; a
second signal ends the process at once.

The pod spec is YAML, as under spec.services[i].pod of a scenario: inline with
--pod-spec, or from a scenario file with --scenario (and --service when it has more
than one, and --set to override values). It is checked as validate checks a
scenario, and a problem exits 2. serve prints one line on stderr once it listens and
nothing per request; with pod.accessLog it writes the log lines on stdout.

A pod whose spec has calls makes them for every request, after its work and wait, as
simulate does: give each Service they name its address with --call SERVICE=URL (the
Service's ClusterIP). The request holds its worker meanwhile; a call that still fails
after its retries, unless optional, makes the answer a 503. --figures FILE writes
what the app did, when the process exits, as JSON: the requests it answered and
held, and its calls per Service (each as the Result's edge, with its latencies and
the attempts each pod answered); emulate adds every pod's up. --figures - writes
them as one line on stderr, after "serve: figures ", where the cluster engine reads
them from the pod's log.`,
		Example: `  trafficlab serve --pod-spec '{serviceTime: {distribution: exponential, mean: 5ms}, concurrency: 4}' --listen 127.0.0.1:8080
  curl -si http://127.0.0.1:8080/
  curl -si --http2-prior-knowledge http://127.0.0.1:8080/
  wrk -c 8 -d 10s http://127.0.0.1:8080/

  trafficlab serve --scenario examples/r1-curl-loop.yaml --name webapp1-2
  trafficlab serve --scenario examples/r2-rapid-scaling.yaml --service web --set spec.services[0].pod.onSigterm.action=drain
  trafficlab serve --pod-spec "$(cat pod.yaml)" --work sleep --ready-after 5s
  trafficlab serve --scenario examples/calls-retry-storm.yaml --service orders --call db=http://127.0.0.1:8081/ --figures orders-0.json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return serveApp(c, &f, stdout, stderr)
		},
	}
	f.register(c)
	return c
}

// serveApp runs the pod's app on --listen until SIGTERM ends it as pod.onSigterm says.
func serveApp(c *cobra.Command, f *serveFlags, stdout, stderr io.Writer) error {
	cfg, err := f.config(c, stderr)
	if err != nil {
		return err
	}
	cfg.AccessLog = stdout
	s, err := serve.New(cfg)
	if err != nil {
		return err
	}
	// Go ≥ 1.25 sizes GOMAXPROCS from the cgroup's CPU limit (runtime/
	// cgroup_linux.go; golang/go#73193), so under a 1-CPU limit one thread
	// would run the app's work at a time and never spend the quota early.
	// The app the scenario describes runs its worker threads on every core of
	// the node and is throttled by CFS (kernel/sched/fair.c, docs/models.md: 4 busy threads under a
	// 1-CPU limit run 25 ms, stall 75 ms), so use every core unless told.
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(runtime.NumCPU())
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "serve: pod %s listening on %s (HTTP/1.1 and h2c)\n", cfg.Name, ln.Addr())
	err = serveUntilExit(c, s, ln)
	if f.figures != "" {
		err = errors.Join(err, writeFigures(f.figures, s.Figures(), stderr))
	}
	if o := s.Overhead(); o > 0 {
		fmt.Fprintf(stderr, "serve: pod %s: its HTTP stack spent %v of CPU a request, taken off the service time\n", cfg.Name, o.Round(time.Microsecond))
	}
	return err
}

// writeFigures writes fig as JSON to the file path, or with path "-" as a line on
// stderr, in the pod's log, where the cluster engine reads it.
func writeFigures(path string, fig serve.Figures, stderr io.Writer) error {
	data, err := json.Marshal(fig)
	switch {
	case err != nil:
		return err
	case path == "-":
		_, err = fmt.Fprintf(stderr, "%s%s\n", serve.FiguresLine, data)
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// register defines serve's flags.
func (f *serveFlags) register(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&f.podSpec, "pod-spec", "", "the pod spec as YAML, as under spec.services[i].pod of a scenario")
	fl.StringVar(&f.scenario, "scenario", "", "take the pod spec from this scenario file")
	// emulate hands each pod its spec, already defaulted and checked, as JSON.
	fl.StringVar(&f.podJSON, "pod-json", "", "the pod spec as emulate passes it: scenario.Pod in JSON")
	_ = fl.MarkHidden("pod-json")
	fl.StringVar(&f.service, "service", "", "with --scenario: the service whose pod to run (default: the only one)")
	fl.StringArrayVar(&f.sets, "set", nil, "with --scenario: override a scenario value: --set path=value (repeatable)")
	fl.StringVar(&f.listen, "listen", ":8080", "TCP address to listen on, HOST:PORT (port 0: any free port)")
	fl.StringVar(&f.name, "name", "", "the pod's name, answered in X-Trafficlab-Pod (default: SERVICE-0 with --scenario,\nelse the host name, as a pod's host name is its name)")
	fl.Int64Var(&f.seed, "seed", 0, "random seed of the pod's draws (default: spec.seed with --scenario, else 0)")
	fl.StringVar(&f.work, "work", serve.Burn, "how to spend the service time: burn (CPU) or sleep")
	fl.DurationVar(&f.readyAfter, "ready-after", 0, "answer 503 on /healthz/ready for this long after starting, e.g. 5s")
	fl.BoolVar(&f.grpc, "grpc", false, "answer gRPC (trafficlab's one unary method, on grpc-go's server, with the spec's grpc settings) beside HTTP/1.1")
	fl.BoolVar(&f.fullBurn, "full-burn", false, "burn the whole service time, on top of what serve's own HTTP stack spends per request")
	fl.StringVar(&f.dns, "dns", "", "DNS server IP:PORT that resolves a called Service's name given by --call (default: the system's)")
	fl.StringArrayVar(&f.calls, "call", nil, "SERVICE=URL: where the pod's calls to SERVICE go, e.g. db=http://198.18.1.5:80/ (repeatable)")
	fl.StringVar(&f.figures, "figures", "", "write what the app did (requests, time held, calls per Service) as JSON to this file at exit (-: a line on stderr)")
}

// callAddresses reads --call SERVICE=URL flags.
func callAddresses(calls []string) (map[string]string, error) {
	out := map[string]string{}
	for _, c := range calls {
		svc, raw, ok := strings.Cut(c, "=")
		u, err := url.Parse(raw)
		switch {
		case !ok || svc == "":
			return nil, fmt.Errorf("--call %q: want SERVICE=URL, e.g. db=http://127.0.0.1:8081/", c)
		case err != nil || u.Scheme != "http" || u.Host == "":
			return nil, fmt.Errorf("--call %q: %s is not an http:// URL", c, raw)
		}
		out[svc] = raw
	}
	return out, nil
}

// config checks the flags and loads the pod spec; every problem is bad input.
func (f *serveFlags) config(c *cobra.Command, stderr io.Writer) (serve.Config, error) {
	bad := func(format string, args ...any) (serve.Config, error) {
		return serve.Config{}, badUsage(c, fmt.Errorf(format, args...))
	}
	changed := c.Flags().Changed
	if changed("pod-json") && (changed("pod-spec") || changed("scenario")) {
		return bad("--pod-json goes alone, without --pod-spec or --scenario")
	}
	switch {
	case !changed("pod-json") && changed("pod-spec") == changed("scenario"):
		return bad("give the pod spec with either --pod-spec YAML or --scenario FILE")
	case !changed("scenario") && changed("set"):
		return bad("--set needs --scenario")
	case changed("pod-spec") && changed("service"):
		return bad("--service names the pod's service with --scenario or --pod-json")
	case f.work != serve.Burn && f.work != serve.Sleep:
		return bad("--work %q: want %s or %s", f.work, serve.Burn, serve.Sleep)
	case f.readyAfter < 0:
		return bad("--ready-after %v: must not be negative", f.readyAfter)
	case strings.ContainsFunc(f.name, unicode.IsControl):
		return bad("--name %q: a header value cannot hold control characters", f.name)
	}
	if _, port, err := net.SplitHostPort(f.listen); err != nil {
		return bad("--listen %q: want HOST:PORT, such as :8080 or 127.0.0.1:0 (%v)", f.listen, err)
	} else if _, err := net.LookupPort("tcp", port); err != nil {
		return bad("--listen %q: %v", f.listen, err)
	}
	cfg := serve.Config{Name: f.name, Seed: f.seed, Work: f.work, ReadyAfter: f.readyAfter, SubtractOverhead: !f.fullBurn, Service: f.service,
		GRPC: f.grpc, DNS: f.dns}
	calls, err := callAddresses(f.calls)
	if err != nil {
		return bad("%v", err)
	}
	cfg.Calls = calls
	if changed("pod-json") {
		cfg.Pod = new(scenario.Pod)
		if err := json.Unmarshal([]byte(f.podJSON), cfg.Pod); err != nil {
			return bad("--pod-json: %v", err)
		}
		if cfg.Name == "" {
			return bad("--pod-json needs --name")
		}
		return cfg, nil
	}
	if changed("pod-spec") {
		pod, diags := serve.ParsePod("--pod-spec", []byte(f.podSpec))
		if err := podDiagnostics(diags, stderr); err != nil {
			return serve.Config{}, err
		}
		cfg.Pod = pod
		if cfg.Name == "" {
			host, err := os.Hostname()
			if err != nil {
				return serve.Config{}, fmt.Errorf("no --name and no host name: %w", err)
			}
			cfg.Name = host
		}
		return cfg, nil
	}
	return f.fromScenario(c, cfg, stderr)
}

// fromScenario takes the pod spec of --service from the --scenario file.
func (f *serveFlags) fromScenario(c *cobra.Command, cfg serve.Config, stderr io.Writer) (serve.Config, error) {
	bad := func(format string, args ...any) (serve.Config, error) {
		return serve.Config{}, badUsage(c, fmt.Errorf(format, args...))
	}
	sc, _, err := loadScenario([]string{f.scenario}, f.sets, stderr)
	if err != nil {
		return serve.Config{}, err
	}
	var names []string
	for i := range sc.Spec.Services {
		svc := &sc.Spec.Services[i]
		names = append(names, svc.Name)
		if svc.Name == f.service || f.service == "" && len(sc.Spec.Services) == 1 {
			cfg.Pod, cfg.Service = &svc.Pod, svc.Name
			if cfg.Name == "" {
				cfg.Name = svc.Name + "-0"
			}
		}
	}
	switch {
	case cfg.Pod != nil:
	case len(names) == 0:
		return bad("%s has no services", f.scenario)
	case f.service == "":
		return bad("%s has %d services (%s): choose one with --service", f.scenario, len(names), strings.Join(names, ", "))
	default:
		return bad("%s has no service %q; it has %s", f.scenario, f.service, strings.Join(names, ", "))
	}
	if !c.Flags().Changed("seed") {
		cfg.Seed = sc.Spec.Seed
	}
	return cfg, nil
}

// podDiagnostics prints the warnings of diags on stderr and returns its errors as bad input.
func podDiagnostics(diags scenario.Diagnostics, stderr io.Writer) error {
	var errs scenario.Diagnostics
	for _, d := range diags {
		if d.Severity == scenario.Warning {
			fmt.Fprintln(stderr, d.Error())
		} else {
			errs = append(errs, d)
		}
	}
	if len(errs) > 0 {
		return badInput{errs}
	}
	return nil
}

// serveUntilExit serves until the app exits. SIGTERM, SIGINT or the command's context ending is
// the kubelet's SIGTERM; a second one ends the process at once, as SIGKILL would.
func serveUntilExit(c *cobra.Command, s *serve.Server, ln net.Listener) error {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, os.Interrupt)
	defer signal.Stop(sigs)
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	ctxDone := c.Context().Done()
	terminated := false
	for {
		select {
		case err := <-done:
			return err
		case <-sigs:
		case <-ctxDone:
			ctxDone = nil
		}
		if terminated {
			return errors.New("serve: killed during the drain")
		}
		terminated = true
		s.Terminate()
	}
}
