// Command cpucost measures, on the machine it runs on, the CPU time that HTTP client
// libraries and load generators spend per request and per new connection, and the CPU
// that a userspace kube-proxy relay spends per relayed connection, per relayed request
// and per KiB. Its output is the source of the CPU cost figures in trafficlab's
// library profiles (model/library).
//
//	go run ./cmd/cpucost [-n 2000] [-reps 3] [-cases go-net-http,ab] [-json]
//
// # Method
//
// Every case talks to a Go net/http server that this command starts as a child process
// (a 13-byte body, "hello, world\n"), on 127.0.0.1 only. With -pin (the default, on a
// machine with 2 or more CPUs) the server runs on CPU 0 (taskset -c 0) and the measured
// client on CPU 1, so the two never share a core; a pinned client sees one CPU, so Go
// sets GOMAXPROCS to 1 and the JVM picks the serial collector. vegeta runs unpinned
// (it may use every CPU, as it would on a load machine), and its timeout regime runs a
// second time under taskset -c 1 to show what one core sustains. The relay runs on
// CPU 1 and its client, this process, unpinned.
//
// CPU is user+system time from getrusage, never wall time, and is always the measured
// process's own: the server's CPU is never counted. Two ways of isolating the part spent
// on requests:
//
//   - inside: the client reports the CPU its own process (every thread) spent in the
//     measured loop, after warm-up requests. Process start, runtime or JVM set-up and
//     warm-up are excluded. Go's net/http and vegeta run in re-executions of this binary
//     (a hidden "child" subcommand) and read getrusage(RUSAGE_SELF) around the loop.
//     Java reads OperatingSystemMXBean.getProcessCpuTime, which JDK 17 computes from
//     times() in 10 ms ticks, so its loop runs until 0.5 s of CPU rather than for -n
//     requests, after up to 25,000 warm-up requests (at most 12 s) for the JIT compiler.
//   - differential: the rusage that wait4 returns for the whole child process (Go's
//     os.ProcessState.SysUsage), for a run of N requests and a baseline run of N0
//     (0, or ab's minimum, -c), per request = (CPU(N) − CPU(N0)) / (N − N0): start-up,
//     imports and warm-up cancel out. Used for ab, the curl loop and Python. wait4's
//     rusage includes every descendant the child waited for (the kernel's
//     wait_task_zombie adds the child's cutime/cstime), so a bash loop's figure includes
//     each curl it ran; checked empirically on Linux 6.18 (a bash running a 0.5 s
//     CPU-bound python reports 0.58 s, the python alone 0.58 s).
//
// A "per new connection" figure is the difference, repetition by repetition, between a
// run that opens a connection for each request and one that reuses a kept-alive
// connection: the client's extra CPU for the connection (socket, connect, close, and
// whatever the library does per connection, such as a new Session or HttpClient where
// that is the only way to get one). The server counts the connections whose first
// request was a measured one (warm-up requests go to /warm), and each row shows them per
// request, so every "new connection" claim is checked, not assumed.
//
// What the figures include. On loopback the kernel processes a sent segment's receive
// side (IP, TCP, waking the peer) in the sender's context, as a softirq on return from
// the send; this kernel accounts CPU by ticks without IRQ time accounting
// (CONFIG_TICK_CPU_ACCOUNTING, no CONFIG_IRQ_TIME_ACCOUNTING), so that work is part of
// the sender's system time. A client's figure therefore includes its TCP send path and
// the receive path of what it sends, but not the receive path of the responses (which
// the server's sends pay for): about what a client pays on a real network, where it
// receives instead of the peer. One excess: a connect's whole handshake, the
// listener's side of it included, runs in the connecting process's context, so a
// per-connection figure also holds the server's SYN handling (a few µs). The
// user/system split is sampled at the tick (the total is exact: the kernel scales the
// sampled split to the scheduler's runtime), so the sys% column is indicative only (in
// differential rows, it is the measured run's whole process's, start-up included).
//
// The figures are only as good as the machine is quiet: the header line shows how much
// CPU other processes used during the run (/proc/stat's busy time minus this process's
// and its children's), and a note asks for a rerun above 5%.
//
// Every loop stops after its count or after 20 s, whichever comes first, and every
// child process is killed after 90 s; a row whose run stopped early shows its actual N.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"
)

// loopLimit bounds every measured loop in time, whatever its count.
const loopLimit = 20 * time.Second

// A sample is one figure from one repetition of a case.
type sample struct {
	Figure string  // what was measured
	Unit   string  // µs/req, µs/conn, µs/KiB or sent/sched
	Value  float64 // in Unit
	Run    *runInfo
}

// runInfo describes the run behind a measured figure; a figure derived from others
// (a difference) has none.
type runInfo struct {
	N     int     `json:"n"`                 // operations measured (requests, connections or KiB)
	Rate  float64 `json:"rate"`              // operations per second of wall time
	Conns float64 `json:"conns_per_req"`     // connections the server accepted per measured request
	Errs  float64 `json:"error_share"`       // share of requests that failed (or timed out)
	Sys   float64 `json:"sys_share"`         // system share of the CPU (tick-sampled)
	Cmd   string  `json:"command,omitempty"` // the measured command line
}

// A row is one figure over all repetitions.
type row struct {
	Case     string    `json:"case"`
	Figure   string    `json:"figure"`
	Unit     string    `json:"unit"`
	Mean     float64   `json:"mean"`
	Min      float64   `json:"min"`
	Max      float64   `json:"max"`
	Values   []float64 `json:"values"`
	*runInfo           // means over the repetitions; absent for derived figures
}

type caseDef struct {
	name  string
	tools []string // executables it needs besides this binary
	run   func(e *env) ([]sample, error)
}

var cases = []caseDef{
	{"go-net-http", nil, goNetHTTP},
	{"grpc-go", nil, grpcGo},
	{"trafficlab-load", nil, trafficlabLoad},
	{"vegeta", nil, vegetaCase},
	{"ab", []string{"ab"}, abCase},
	{"curl-loop", []string{"bash", "curl"}, curlLoop},
	{"python-requests", []string{"python3"}, pythonRequests},
	{"node", []string{"node"}, nodeClients},
	{"python-httpx-aiohttp", []string{"python3"}, pythonAsyncClients},
	{"java-httpclient", []string{"javac", "java"}, javaHTTPClient},
	{"okhttp-apache", []string{"mvn", "javac", "java"}, jvmLibraries},
	{"userspace-relay", nil, relayCase},
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "child" {
		if err := child(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "cpucost child:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "cpucost:", err)
		os.Exit(1)
	}
}

func run() error {
	var names []string
	for _, c := range cases {
		names = append(names, c.name)
	}
	e := &env{}
	flag.IntVar(&e.n, "n", 2000, "requests per measured run (go-net-http, ab, python-requests, userspace-relay; java-httpclient runs until 0.5 s of CPU)")
	flag.IntVar(&e.curlN, "curl-n", 200, "curl processes per measured run of curl-loop")
	flag.IntVar(&e.reps, "reps", 3, "repetitions of every figure (the table shows their mean and min–max)")
	flag.Int64Var(&e.bulk, "bulk", 1<<30, "bytes through one relayed connection for userspace-relay's per-KiB figure")
	flag.BoolVar(&e.pin, "pin", true, "run the server on CPU 0 and the measured client on CPU 1 (taskset)")
	list := flag.String("cases", strings.Join(names, ","), "comma-separated cases to run")
	asJSON := flag.Bool("json", false, "print JSON instead of a table")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "Usage: cpucost [flags]\n\n%s\nFlags:\n", usageText)
		flag.PrintDefaults()
	}
	flag.Parse()
	if e.n < 1 || e.curlN < 1 || e.reps < 1 || e.bulk < 1<<10 {
		return fmt.Errorf("-n, -curl-n and -reps must be positive, -bulk at least 1024")
	}
	var selected []caseDef
	for _, name := range strings.Split(*list, ",") {
		i := slices.IndexFunc(cases, func(c caseDef) bool { return c.name == strings.TrimSpace(name) })
		if i < 0 {
			return fmt.Errorf("unknown case %q (cases: %s)", name, strings.Join(names, ", "))
		}
		selected = append(selected, cases[i])
	}
	busy0, ours0 := machineBusy(), ourCPU()
	if err := e.start(); err != nil {
		return err
	}
	defer e.close()

	var rows []row
	var skipped []string
	for _, c := range selected {
		if missing := missingTools(c.tools); missing != "" {
			skipped = append(skipped, fmt.Sprintf("%s: %s not found", c.name, missing))
			continue
		}
		fmt.Fprintf(os.Stderr, "cpucost: %s ...\n", c.name)
		samples, err := c.run(e)
		if err != nil {
			var skip skipError
			if errors.As(err, &skip) {
				skipped = append(skipped, fmt.Sprintf("%s: %v", c.name, err))
				continue
			}
			return fmt.Errorf("%s: %w", c.name, err)
		}
		rows = append(rows, aggregate(c.name, samples)...)
	}
	skipped = append(skipped, e.notes...)
	e.close() // reaped, the daemons' CPU is in ourCPU
	others := (machineBusy() - busy0 - (ourCPU() - ours0)).Seconds() / time.Since(e.started).Seconds() / float64(runtime.NumCPU())
	e.others = fmt.Sprintf("%.1f%%", max(0, 100*others))
	if others > 0.05 {
		skipped = append(skipped, fmt.Sprintf("other processes used %s of the machine's CPU during the run: "+
			"they compete for caches and cores, so rerun on an idle machine", e.others))
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Machine map[string]string `json:"machine"`
			Rows    []row             `json:"rows"`
			Notes   []string          `json:"notes,omitempty"`
		}{e.machine(), rows, skipped})
	}
	printTable(os.Stdout, e.machine(), rows, skipped)
	return nil
}

const usageText = `Measures, on this machine, the CPU time HTTP clients and load generators spend per
request and per new connection, and a userspace kube-proxy relay (the shape of
emulate/userspace) per relayed connection, request and KiB. Everything talks to a Go
net/http server started as a child process on 127.0.0.1 (13-byte body).

CPU is getrusage user+system time of the measured process only, never the server's:
  - inside: the client's own CPU around its measured loop, after warm-up requests
    (Go net/http and vegeta in re-executions of this binary; Java via
    getProcessCpuTime, looping until 0.5 s of CPU after a JIT warm-up);
  - differential: wait4's rusage of the whole child process, descendants included,
    for N requests minus a baseline run of N0 (ab, the curl loop, Python requests).
"Per new connection" is, repetition by repetition, a connection-per-request run minus
a keep-alive run; the server counts the connections, shown per request (conns/req).
With -pin the server runs on CPU 0 and the client on CPU 1; vegeta runs unpinned, and
its timeout regime (server answers after 20 ms, vegeta timeout 10 ms, 2,000 rps) again
under taskset -c 1. On loopback a sender's CPU includes the kernel's receive path of
what it sends. The header shows the CPU other processes used meanwhile: rerun if it
is not near 0. The package documentation (go doc ./cmd/cpucost) has the details.
`

// aggregate groups the samples of one case by figure, in the order first seen.
func aggregate(name string, samples []sample) []row {
	var rows []row
	var runs [][]*runInfo
	for _, s := range samples {
		i := slices.IndexFunc(rows, func(r row) bool { return r.Figure == s.Figure })
		if i < 0 {
			rows = append(rows, row{Case: name, Figure: s.Figure, Unit: s.Unit, Min: math.Inf(1), Max: math.Inf(-1)})
			runs = append(runs, nil)
			i = len(rows) - 1
		}
		r := &rows[i]
		r.Values = append(r.Values, s.Value)
		r.Min, r.Max = min(r.Min, s.Value), max(r.Max, s.Value)
		if s.Run != nil {
			runs[i] = append(runs[i], s.Run)
		}
	}
	for i := range rows {
		r := &rows[i]
		for _, v := range r.Values {
			r.Mean += v / float64(len(r.Values))
		}
		if len(runs[i]) > 0 {
			r.runInfo = meanRun(runs[i])
		}
	}
	return rows
}

func meanRun(runs []*runInfo) *runInfo {
	m := &runInfo{N: runs[0].N, Cmd: runs[0].Cmd}
	for _, r := range runs {
		f := 1 / float64(len(runs))
		m.N = min(m.N, r.N) // the smallest, so that a run cut short by loopLimit shows
		m.Rate += r.Rate * f
		m.Conns += r.Conns * f
		m.Errs += r.Errs * f
		m.Sys += r.Sys * f
	}
	return m
}

func printTable(w io.Writer, machine map[string]string, rows []row, notes []string) {
	fmt.Fprintf(w, "cpucost: %s, %s CPUs (%s), Linux %s, %s, pinned: %s, other processes' CPU: %s\n\n",
		machine["date"], machine["cpus"], machine["cpu_model"], machine["kernel"], machine["go"], machine["pinned"], machine["others"])
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tfigure\tmean\tmin–max\tunit\tN\trate/s\tconns/req\terr%\tsys%\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s–%s\t%s\t", r.Case, r.Figure, num(r.Mean), num(r.Min), num(r.Max), r.Unit)
		if r.runInfo == nil {
			fmt.Fprint(tw, "\t\t\t\t\t\n")
			continue
		}
		fmt.Fprintf(tw, "%d\t%s\t%.3f\t%.1f\t%.0f\t\n", r.N, num(r.Rate), r.Conns, 100*r.Errs, 100*r.Sys)
	}
	tw.Flush()
	fmt.Fprintln(w, "\ncommands (one repetition; the differential cases also ran the baseline N0):")
	for _, r := range rows {
		if r.runInfo != nil && r.Cmd != "" {
			fmt.Fprintf(w, "  %s / %s:\n      %s\n", r.Case, r.Figure, r.Cmd)
		}
	}
	for _, n := range notes {
		fmt.Fprintln(w, "note:", n)
	}
}

// num prints a figure with 3 significant digits, or as an integer when larger.
func num(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func (e *env) machine() map[string]string {
	var u unix.Utsname
	unix.Uname(&u)
	model := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return map[string]string{
		"date":      e.started.UTC().Format(time.DateTime + " UTC"),
		"cpus":      fmt.Sprint(runtime.NumCPU()),
		"cpu_model": model,
		"kernel":    unix.ByteSliceToString(u.Release[:]),
		"go":        runtime.Version(),
		"pinned":    fmt.Sprint(e.pinned()),
		"others":    e.others,
	}
}

// machineBusy is the CPU time every CPU has spent on anything but idling since boot
// (/proc/stat: user, nice, system, irq, softirq; not iowait, nor steal, which the
// hypervisor took), at USER_HZ resolution, 100 per second on Linux.
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7} {
		if i < len(f) {
			n, _ := strconv.ParseInt(f[i], 10, 64)
			ticks += n
		}
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// ourCPU is the CPU this process and its reaped children have spent.
func ourCPU() time.Duration {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	return rusage(&self).cpu() + rusage(&children).cpu()
}

func missingTools(tools []string) string {
	var missing []string
	for _, t := range tools {
		if _, err := exec.LookPath(t); err != nil {
			missing = append(missing, t)
		}
	}
	return strings.Join(missing, ", ")
}
