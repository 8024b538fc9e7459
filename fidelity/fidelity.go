// Package fidelity measures how far simulate is from emulate and from a real
// cluster: a fixed set of scenarios (R1's rows and R1 inside the cluster, a
// frontend calling webapp1; R2's scale-in under iptables and userspace, and its
// relay's CPU; R3's noisy neighbour on a throttled disk; R4's loss case; R5's
// client sidecar with one and two workers; gRPC channels behind a ClusterIP and
// over a headless Service) runs in every engine with the same seeds, those a
// cluster can run in the cluster engine too, and a table sets them side by side.
// `make fidelity` prints it; the README keeps a copy.
package fidelity

import (
	"cmp"
	"context"
	"embed"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"trafficlab/cluster"
	"trafficlab/emulate"
	"trafficlab/examples"
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/simulate"
)

//go:embed scenarios/*.yaml
var scenarios embed.FS

// Case is one row: a scenario (an example, or one of this package's) with overrides.
type Case struct {
	Name, File string
	Sets       []string
	// Duration, when set, replaces the run's duration for this case: for rare
	// events that a short run catches in some seeds and not others.
	Duration time.Duration
	// NotOnCluster says why the cluster engine does not run this case; "" runs it.
	NotOnCluster string
}

// Why some cases do not run on a cluster.
const (
	// noUserspace: kube-proxy's userspace mode was removed in v1.26, and no
	// cluster of a supported version has it.
	noUserspace = "kube-proxy has had no userspace mode since v1.26"
	// noLoss: the cluster's own network carries the traffic, and the cluster
	// engine adds no loss to it.
	noLoss = "the cluster engine adds no packet loss to the cluster's network"
	// noSidecar: the cluster engine runs the pods without the scenario's sidecars.
	noSidecar = "the cluster engine runs no sidecar proxy"
	// noNodeDisk: the cluster engine changes no node, and runs no background
	// workload.
	noNodeDisk = "the cluster engine changes no node's disk and runs no background workload"
)

// The R1 examples' inputs that this machine cannot run as they are, overridden in
// both engines, so that both run the same scenario:
const (
	// noLatency: spec.cluster.network.latency is 100us, and emulate adds no
	// latency under 1 ms (emulate/support.go minDelay). Both engines run without
	// it; the machine's own hops (about 10 µs measured, emulate/delay's test)
	// stand in for it in emulate.
	noLatency = "spec.cluster.network.latency=0s"
	// fitPods: with five or more threads, simulate has the five pods use 3 to 6
	// cores, and this machine has 2, shared with the load generator; a run then
	// measures the machine (emulate warns). A 200m CPU limit a pod makes the
	// pods one core in all, and both engines then also run CFS quota throttling.
	fitPods = "spec.services[0].pod.cpu=200m"
)

// loadWork: every emulated client pod runs emulate's own load generator
// (emulate/load's HTTP/1.1 client), whatever library it names, so simulate charges
// that client's CPU instead of the library's: 30.1 µs a request and 56.8 µs a new
// connection (go run ./cmd/cpucost -cases trafficlab-load, on this machine), and
// no steady CPU beside it (vegeta's pacer is not what runs).
var loadWork = []string{"spec.clients[0].work.perRequest=30100ns", "spec.clients[0].work.perConnection=56800ns",
	"spec.clients[0].work.steady=0"}

// pausedLoadWork: a load generator that pauses 15 ms before each request spends
// 660 µs a request, not 35.5 µs (cmd/cpucost's paced figure against its keep-alive
// one, the same run): it times its waits to tens of microseconds with a thread of
// its own, whose futex waits keep the Go runtime's sysmon polling. That is 41
// millicores at the 65.5 requests a second it sent, spent while it waits, so
// simulate charges it as steady CPU, which delays no request. R1's new client per
// request pauses 14.4 ms before each.
const pausedLoadWork = "spec.clients[0].work.steady=41m"

// grpcWork: emulate's gRPC clients are grpc-go, whose CPU cmd/cpucost measured
// (library grpc-go: 46.9 µs a call, 224 µs a new channel and connection); it
// replaces loadWork, which is emulate's HTTP/1.1 client's.
var grpcWork = []string{"spec.clients[0].work.perRequest=46900ns", "spec.clients[0].work.perConnection=224us"}

// Cases are the rows `make fidelity` runs.
var Cases = []Case{
	{Name: "R1 curl loop", File: "r1-curl-loop.yaml", Sets: []string{noLatency}},
	// The curl loop without the 12.8 ms of process start between requests: a new
	// connection per request on a machine that is never idle, to tell the cost of
	// the connection from that of waking an idle machine.
	{Name: "R1 curl loop, back to back", File: "r1-curl-loop.yaml", Sets: []string{noLatency, "spec.clients[0].overhead=0s"}},
	{Name: "R1 new client per request", File: "r1-new-client-per-request.yaml", Sets: []string{noLatency, pausedLoadWork}},
	{Name: "R1 reused client, 1 thread", File: "r1-reused-client-1-thread.yaml", Sets: []string{noLatency}},
	{Name: "R1 client per thread, 5 threads, 200m pods", File: "r1-client-per-thread-5-threads.yaml", Sets: []string{noLatency, fitPods}},
	{Name: "R1 shared client, 5 threads, 200m pods", File: "r1-shared-client-5-threads.yaml", Sets: []string{noLatency, fitPods}},
	{Name: "R1 shared client, 20 threads, 200m pods", File: "r1-shared-client-20-threads.yaml", Sets: []string{noLatency, fitPods}},
	{Name: "R1 7 callers × 3 threads, 200m pods", File: "r1-7-callers-3-threads.yaml", Sets: []string{noLatency, fitPods}},
	// Services that call services: the frontend's pods hold the connections that
	// pin webapp1's load, made by `trafficlab serve` through the ClusterIP.
	{Name: "R1 in the cluster: a frontend's calls, 200m pods", File: "r1-in-cluster.yaml",
		Sets: []string{noLatency, "spec.services[0].pod.cpu=200m", "spec.services[1].pod.cpu=200m"}},
	{Name: "R2 scale-in, iptables", File: "r2-scale-in.yaml"},
	{Name: "R2 scale-in, userspace", File: "r2-scale-in.yaml", Sets: []string{"spec.cluster.proxyMode=userspace"}, NotOnCluster: noUserspace},
	// Issue 20's R2 check: the userspace relay's CPU per connection against none,
	// where the client's and the relay's CPU, not the pods', set the pace.
	{Name: "R2 relay CPU, iptables", File: "r2-relay.yaml"},
	{Name: "R2 relay CPU, userspace", File: "r2-relay.yaml", Sets: []string{"spec.cluster.proxyMode=userspace"}, NotOnCluster: noUserspace},
	// Issue 20's R5 check: an open loop whose CPU limit cannot carry its rate falls
	// behind and sends the share its CPU affords.
	{Name: "R5 client CPU-bound, 60m limit", File: "r5-client-cpu.yaml"},
	// Issue 24's R3: the nodes' disks throttled, the access logs on them, and a
	// neighbour writing in 40 MiB chunks on node-1 (emulate/disk, containerlog,
	// background).
	{Name: "R3 noisy neighbour's disk", File: "r3-disk.yaml", NotOnCluster: noNodeDisk},
	// Issue 24's R5 sidecar: nginx in Envoy's place in emulate (emulate/sidecar).
	// One client-sidecar worker at 5.5 ms a request cannot carry 200 requests a
	// second and its queue passes the client's timeout; two workers carry them.
	{Name: "R5 sidecar, 1 worker", File: "r5-sidecar.yaml", NotOnCluster: noSidecar},
	{Name: "R5 sidecar, 2 workers", File: "r5-sidecar.yaml", Sets: []string{"spec.clients[0].sidecar.concurrency=2"}, NotOnCluster: noSidecar},
	// One retransmission timeout stalls every stream of R4's one HTTP/2 connection
	// for 200 ms or more, some 50 requests at 200/s; in 10 s (2,000 requests) that
	// alone decides the p99, and simulate had one in 2 of 10 seeds. 30 s runs.
	{Name: "R4 3% loss, HTTP/1.1", File: "r4-loss.yaml", Sets: []string{"spec.clients[0].connections.protocol=http1"}, Duration: 30 * time.Second, NotOnCluster: noLoss},
	{Name: "R4 3% loss, HTTP/2", File: "r4-loss.yaml", Sets: []string{"spec.clients[0].connections.protocol=http2"}, Duration: 30 * time.Second, NotOnCluster: noLoss},
	// Issue 21: grpc-go channels, grpc-go servers. pick_first behind a ClusterIP
	// pins each channel to one pod; a server's maxConnectionAge makes the channels
	// reconnect through kube-proxy; round_robin over a headless Service, resolved
	// at the cluster's DNS, connects each channel to every pod.
	{Name: "gRPC pick_first, ClusterIP", File: "grpc.yaml", Sets: grpcWork},
	{Name: "gRPC pick_first, ClusterIP, maxConnectionAge 2s", File: "grpc.yaml",
		Sets: append([]string{"spec.services[0].pod.grpc={maxConnectionAge: 2s}"}, grpcWork...)},
	{Name: "gRPC round_robin, headless", File: "grpc.yaml",
		Sets: append([]string{"spec.services[0].clusterIP=None", "spec.clients[0].connections.loadBalancing=round_robin"}, grpcWork...)},
}

// Row is one case's runs, one per seed in each engine; Cluster is empty where
// the cluster engine did not run it.
type Row struct {
	Case              Case
	Sim, Emu, Cluster []*result.Result
}

// Load reads a case's scenario with its overrides, the seed and the duration.
func Load(c Case, seed int64, duration time.Duration) (*scenario.Scenario, error) {
	data, err := examples.Get(c.File)
	if err != nil {
		if data, err = scenarios.ReadFile("scenarios/" + c.File); err != nil {
			return nil, fmt.Errorf("no scenario %s", c.File)
		}
	}
	sets := slices.Concat(loadWork, c.Sets, []string{fmt.Sprintf("spec.seed=%d", seed), "spec.duration=" + duration.String()})
	sc, _, diags := scenario.Load(c.File, data, sets)
	if diags.HasErrors() {
		return nil, diags
	}
	return sc, nil
}

// Run runs every case with every seed in both engines, saying what it does on log.
func Run(ctx context.Context, cases []Case, seeds []int64, duration time.Duration, opt emulate.Options, log io.Writer) ([]Row, error) {
	var rows []Row
	for _, c := range cases {
		row := Row{Case: c}
		d := duration
		if c.Duration > 0 {
			d = c.Duration
		}
		for _, seed := range seeds {
			sc, err := Load(c, seed, d)
			if err != nil {
				return rows, err
			}
			e, err := simulate.New(sc)
			if err != nil {
				return rows, fmt.Errorf("%s: %w", c.Name, err)
			}
			e.Run(nil)
			row.Sim = append(row.Sim, e.Result())
			plan, err := emulate.Check(sc)
			if err != nil {
				return rows, fmt.Errorf("%s, seed %d: %w", c.Name, seed, err)
			}
			fmt.Fprintf(log, "fidelity: %s, seed %d: emulating %v\n", c.Name, seed, d)
			r, err := emulate.Run(ctx, plan, opt)
			if err != nil {
				return rows, fmt.Errorf("%s, seed %d: %w", c.Name, seed, err)
			}
			row.Emu = append(row.Emu, r)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// RunCluster runs, with every seed, each case of rows that a cluster can run in
// the cluster engine with opt, filling the rows' Cluster runs.
func RunCluster(ctx context.Context, rows []Row, seeds []int64, duration time.Duration, opt cluster.Options, log io.Writer) error {
	for i := range rows {
		c := rows[i].Case
		if c.NotOnCluster != "" {
			continue
		}
		for _, seed := range seeds {
			sc, err := Load(c, seed, cmp.Or(c.Duration, duration))
			if err != nil {
				return err
			}
			fmt.Fprintf(log, "fidelity: %s, seed %d: on the cluster for %v\n", c.Name, seed, sc.Spec.Duration.Duration)
			r, err := cluster.Run(ctx, sc, opt)
			if err != nil {
				return fmt.Errorf("%s, seed %d, on the cluster: %w", c.Name, seed, err)
			}
			rows[i].Cluster = append(rows[i].Cluster, r)
		}
	}
	return nil
}

// Table writes the rows side by side: simulate, emulate, the cluster where any
// row ran on one, and each one's difference relative to simulate, each a mean
// over the seeds. The share error is the largest gap between an engine's pod
// shares and simulate's, pods ranked by share (which pod is the busy one is
// chance); idle pods are those that served nothing. A row the cluster did not
// run has "–" in its column.
func Table(w io.Writer, rows []Row, markdown bool) error {
	onCluster := slices.ContainsFunc(rows, func(r Row) bool { return len(r.Cluster) > 0 })
	engines := "sim / emu"
	if onCluster {
		engines += " / cluster"
	}
	head := []string{"scenario", "share error", "idle pods " + engines, "throughput " + engines, "p50 " + engines, "p99 " + engines, "errors " + engines, "client CPU a request " + engines}
	if onCluster {
		head[1] = "share error emu / cluster"
	}
	var lines [][]string
	for _, r := range rows {
		// each writes f's means, the cluster's only where some row has one.
		each := func(f func(*result.Result) float64, format string, relative bool) string {
			sim := mean(r.Sim, f)
			cells := []string{fmt.Sprintf(format, sim)}
			for i, rs := range [][]*result.Result{r.Emu, r.Cluster} {
				switch {
				case i == 1 && !onCluster:
				case len(rs) == 0:
					cells = append(cells, "–")
				case relative:
					cells = append(cells, fmt.Sprintf(format+" (%s)", mean(rs, f), difference(sim, mean(rs, f))))
				default:
					cells = append(cells, fmt.Sprintf(format, mean(rs, f)))
				}
			}
			return strings.Join(cells, " / ")
		}
		share := fmt.Sprintf("%.1f", 100*shareError(r.Sim, r.Emu))
		if onCluster {
			if len(r.Cluster) == 0 {
				share += " / –"
			} else {
				share += fmt.Sprintf(" / %.1f", 100*shareError(r.Sim, r.Cluster))
			}
		}
		lines = append(lines, []string{
			r.Case.Name,
			share + " pts",
			each(idle, "%.2g", false),
			each(throughput, "%.0f/s", true),
			each(p50, "%.3gms", true),
			each(p99, "%.3gms", true),
			each(errorCount, "%.0f", false),
			each(clientCPUPerRequest, "%.3gµs", true),
		})
	}
	return writeTable(w, head, lines, markdown)
}

// NotOnCluster lists the rows the cluster engine did not run, each with why.
func NotOnCluster(w io.Writer, rows []Row) {
	for _, r := range rows {
		if r.Case.NotOnCluster != "" {
			fmt.Fprintf(w, "- %s: not on the cluster, as %s.\n", r.Case.Name, r.Case.NotOnCluster)
		}
	}
}

// writeTable writes a table in Markdown or aligned for a terminal.
func writeTable(w io.Writer, head []string, lines [][]string, markdown bool) error {
	if markdown {
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
		for _, l := range lines {
			fmt.Fprintf(w, "| %s |\n", strings.Join(l, " | "))
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, l := range lines {
		fmt.Fprintln(tw, strings.Join(l, "\t"))
	}
	return tw.Flush()
}

// Check is one of the field reports' findings about CPU that callers and proxies
// spend, as a figure in both engines: of one case's runs, or one case's over
// another's (Over), each a mean over the seeds.
type Check struct {
	Name      string
	Row, Over string
	Figure    func(*result.Result) float64
	// Format writes the figure; Reported is the field report's own.
	Format, Reported string
}

// Checks are issue 20's three: R1's caller CPU with a reused client over a new
// client per request (69 % against 12 % of a core); the time R2's fixed ab run
// took through the userspace relay over iptables (2.7×: the same requests, so
// iptables' throughput over userspace's); the share of its schedule R5's
// CPU-bound vegeta sent (1.34 to 1.36 M of 3 M in its runs with a client sidecar).
var Checks = []Check{
	{Name: "R1 caller CPU, reused client over a new client per request", Row: "R1 reused client, 1 thread", Over: "R1 new client per request",
		Figure: clientCores, Format: "%.2g×", Reported: "5.75× (69 % over 12 %)"},
	{Name: "R2 time of a fixed ab run, userspace over iptables", Row: "R2 relay CPU, iptables", Over: "R2 relay CPU, userspace",
		Figure: throughput, Format: "%.2g×", Reported: "about 2.7×"},
	{Name: "R5 share of its schedule a CPU-bound client sent", Row: "R5 client CPU-bound, 60m limit",
		Figure: sentShare, Format: "%.0f%%", Reported: "45 % (about 1.35 M of 3 M)"},
}

// CheckTable writes each check whose cases ran: its figure in each engine ("–"
// where the cluster did not run its cases) and the field report's.
func CheckTable(w io.Writer, rows []Row, markdown bool) error {
	byName := map[string]Row{}
	for _, r := range rows {
		byName[r.Case.Name] = r
	}
	onCluster := slices.ContainsFunc(rows, func(r Row) bool { return len(r.Cluster) > 0 })
	var lines [][]string
	for _, c := range Checks {
		row, ok := byName[c.Row]
		over, hasOver := byName[c.Over]
		if !ok || c.Over != "" && !hasOver {
			continue
		}
		figure := func(rs, overs []*result.Result) string {
			if len(rs) == 0 || c.Over != "" && len(overs) == 0 {
				return "–"
			}
			v := mean(rs, c.Figure)
			if c.Over != "" {
				v /= mean(overs, c.Figure)
			}
			return fmt.Sprintf(c.Format, v)
		}
		line := []string{c.Name, figure(row.Sim, over.Sim), figure(row.Emu, over.Emu)}
		if onCluster {
			line = append(line, figure(row.Cluster, over.Cluster))
		}
		lines = append(lines, append(line, c.Reported))
	}
	if len(lines) == 0 {
		return nil
	}
	head := []string{"check", "simulate", "emulate", "field report"}
	if onCluster {
		head = []string{"check", "simulate", "emulate", "cluster", "field report"}
	}
	return writeTable(w, head, lines, markdown)
}

// difference is x's relative to sim's.
func difference(sim, x float64) string {
	switch {
	case sim != 0:
		return fmt.Sprintf("%+.0f%%", 100*(x-sim)/sim)
	case x != 0:
		return "from 0"
	}
	return "="
}

func throughput(r *result.Result) float64 { return r.ThroughputRPS }
func p50(r *result.Result) float64        { return r.LatencyMS.P50 }
func p99(r *result.Result) float64        { return r.LatencyMS.P99 }
func errorCount(r *result.Result) float64 { return float64(r.Errors.Total()) }

// clientCores is the CPU the run's clients spent, in cores.
func clientCores(r *result.Result) float64 {
	sum := 0.0
	for _, c := range r.Clients {
		sum += c.CPUCores
	}
	return sum
}

// clientCPUPerRequest is the clients' CPU a request sent, in µs.
func clientCPUPerRequest(r *result.Result) float64 {
	var sent int64
	for _, c := range r.Clients {
		sent += c.Sent
	}
	if sent == 0 {
		return 0
	}
	return clientCores(r) * r.DurationS / float64(sent) * 1e6
}

// sentShare is the percentage of the open-loop arrivals due that the clients sent.
func sentShare(r *result.Result) float64 {
	var sent, due int64
	for _, c := range r.Clients {
		sent, due = sent+c.Sent, due+c.Due
	}
	if due == 0 {
		return 0
	}
	return 100 * float64(sent) / float64(due)
}

// idle is how many of the pods present from the start served nothing.
func idle(r *result.Result) float64 {
	n := 0
	for _, p := range r.Pods {
		if p.StartS == 0 && p.Requests == 0 {
			n++
		}
	}
	return float64(n)
}

func mean(rs []*result.Result, f func(*result.Result) float64) float64 {
	sum := 0.0
	for _, r := range rs {
		sum += f(r)
	}
	return sum / float64(max(len(rs), 1))
}

// shares are a run's pod shares of all answers, largest first.
func shares(r *result.Result) []float64 {
	var total int64
	for _, p := range r.Pods {
		total += p.Requests
	}
	var out []float64
	for _, p := range r.Pods {
		if total > 0 {
			out = append(out, float64(p.Requests)/float64(total))
		}
	}
	slices.SortFunc(out, func(a, b float64) int { return cmpDesc(a, b) })
	return out
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// meanShares averages the ranked shares over runs.
func meanShares(rs []*result.Result) []float64 {
	var sum []float64
	for _, r := range rs {
		for i, s := range shares(r) {
			if i == len(sum) {
				sum = append(sum, 0)
			}
			sum[i] += s
		}
	}
	for i := range sum {
		sum[i] /= float64(len(rs))
	}
	return sum
}

// shareError is the largest gap between the engines' mean ranked pod shares.
func shareError(sim, emu []*result.Result) float64 {
	a, b := meanShares(sim), meanShares(emu)
	worst := 0.0
	for i := range max(len(a), len(b)) {
		var x, y float64
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		worst = math.Max(worst, math.Abs(x-y))
	}
	return worst
}
