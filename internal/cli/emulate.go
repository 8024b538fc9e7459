package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"trafficlab/emulate"
	"trafficlab/result"
	"trafficlab/scenario"
)

type emulateFlags struct {
	runFlags
	scale   float64
	cleanup bool
	dryRun  bool
}

func newEmulate(stdout, stderr io.Writer) *cobra.Command {
	var f emulateFlags
	c := &cobra.Command{
		Use:   "emulate [FILE]",
		Short: "Run a scenario for real on this Linux machine (root)",
		Long: `emulate runs a scenario for real on this machine, to check a simulation against
reality or to watch a problem happen: each node and pod is a network namespace, pods
are wired to their nodes by veth pairs as a routed CNI wires them, kube-proxy's own
iptables or nftables rules (or its userspace proxy) run in every node, each service
pod runs ` + "`trafficlab serve`" + ` under the CPU limit of its spec (a CFS quota in a cgroup),
and each client pod is a ` + "`trafficlab load`" + ` process in its namespace and a cgroup of
its own, limited as its resources say. Pods start where simulate places them. Loss on the cluster network or a
link override becomes nftables drop rules on the pods' veths; latency of 1ms or more,
and jitter, a userspace relay (NFQUEUE) that holds each packet for its delay.

The result has the same form as simulate's, with "engine": "emulate": every -o
format, --html and ` + "`trafficlab compare`" + ` work on it. Its numbers are measured, not
computed: the same seed gives similar, not identical, results. A client pod's CPU is
what trafficlab's own load generator spends, whatever library the client names (its
clients[].work is simulate's); an open loop that its CPU cannot keep up with falls
behind its schedule and reports the requests it never sent, as vegeta would.

It needs root, iproute2, and iptables or nft. It only creates namespaces named
tl-PID-..., control groups under trafficlab/, and addresses in 198.18.0.0/15, and
sends traffic only inside them; everything is removed at the end, on an error, and
on Ctrl-C. --cleanup removes what a crashed run (kill -9) left behind.

An autoscaled service is scaled for real: metrics-server's readings come from the
pods' cgroups, the HPA's algorithm decides every sync period, and the ReplicaSet
controller adds pods (placed by the same scheduler as simulate's, started after
their startupDelay) or deletes those it ranks first. Other pod changes (rollouts,
pod-kill faults) follow a simulation of the scenario, replayed on the clock. What
follows each change is real: the app starting, each node's kube-proxy learning of
it late, preStop, SIGTERM and the app's exit or drain, SIGKILL, the pod's address
going away.

Timed faults of kind loss, partition and delay act on their target's veths from
start to end, in series with the network's own loss and delay, as in simulate.

An Istio sidecar runs as nginx with its Lua module, in Envoy's place (Envoy is not
packaged; apt install nginx libnginx-mod-http-lua): a worker process per Envoy
worker, each connection on the worker the kernel hashes it to, perRequestCPU spent
on the worker's own CPU clock, the proxy's CPU limit, Istio's iptables redirects,
a pod picked per request (LEAST_REQUEST as two random picks over shared counts) and
Istio's default retries. It runs HTTP/1.1 only, with Istio's default circuit
breakers and retry conditions, in front of pods that do not change during the run,
and not on a service that calls services; nginx's own proxying adds under 0.2ms a
request to perRequestCPU.

A node whose disk has limits gets a loop device with ext4 throttled to them (root's
blkio.throttle, cgroup v1), and each pod's access log reaches it as containerd writes
it: a pipe, a log writer process, CRI-format lines in the page cache, which wait for
the disk only when the kernel throttles dirty pages (simulate has every log write
wait behind the disk's queue: a warning says so). A background workload is a
process on its node, under its CPU limit, burning its cores and writing its chunks
to the node's volume on its schedule.

Not emulated yet (emulate says so, at the scenario line): IPVS (this kernel has no
ip_vs), bandwidth faults and limits, faults or links between two sets of
pods (peer), loss correlation, delay together with
pods changing during the run, a delay fault over another delay, rollouts and
pod-kills of an autoscaled service. Latency under 1ms is
not added (one packet's wake-up in the relay varies by about 0.2ms): a warning says so.
A scenario larger than one machine runs for real (over ` + fmt.Sprintf("%d pods, %d open-loop requests/s or %d\nthreads", emulate.MaxPods, emulate.MaxRate, emulate.MaxThreads) + `) is refused with a --scale that fits; --scale 0.5 halves nodes,
replicas and client pods, keeping the load per pod.`,
		Example: `  sudo trafficlab emulate examples/r1-curl-loop.yaml
  sudo trafficlab emulate examples/r1-shared-client-5-threads.yaml --duration 20s -o json > emu.json
  trafficlab simulate examples/r1-shared-client-5-threads.yaml --duration 20s -o json > sim.json
  trafficlab compare sim.json emu.json
  trafficlab emulate examples/r1-7-callers-3-threads.yaml --dry-run
  sudo trafficlab emulate big.yaml --scale 0.25
  sudo trafficlab emulate --cleanup`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runEmulate(c, args, &f, stdout, stderr)
		},
	}
	f.register(c)
	c.Flags().Float64Var(&f.scale, "scale", 1, "resize the scenario by this factor first, keeping its ratios: nodes, replicas and client pods\n×F (at least 1 each), the load per pod unchanged; e.g. 0.5")
	c.Flags().BoolVar(&f.cleanup, "cleanup", false, "remove what crashed runs left behind (namespaces, cgroups, processes) and exit")
	c.Flags().BoolVar(&f.dryRun, "dry-run", false, "check the scenario and print where its pods would run, without root and without running it")
	return c
}

// runEmulate checks the scenario, prints its plan for --dry-run, or runs it for real
// and writes what it measured.
func runEmulate(c *cobra.Command, args []string, f *emulateFlags, stdout, stderr io.Writer) error {
	if f.cleanup {
		return runCleanup(c, args, stdout)
	}
	render, err := renderer(f.output)
	if err != nil {
		return err
	}
	if c.Flags().Changed("requests") {
		return badInput{errors.New("--requests: emulate does not record single requests yet; use simulate --requests")}
	}
	if c.Flags().Changed("scale") && f.scale <= 0 {
		return badInput{fmt.Errorf("--scale %g: want a factor above 0, such as 0.5", f.scale)}
	}
	src, err := readSource(args)
	if err != nil {
		return err
	}
	sc, pos, err := f.load(c, src, stderr)
	if err != nil {
		return err
	}
	if c.Flags().Changed("scale") {
		for _, change := range emulate.Scale(sc, f.scale) {
			fmt.Fprintf(stderr, "emulate: --scale %g: %s\n", f.scale, change)
		}
	}
	plan, err := emulate.Check(sc)
	if err != nil {
		return emulateInputError(err, pos)
	}
	if f.dryRun {
		printPlan(stdout, plan)
		return nil
	}
	if os.Geteuid() != 0 {
		return errors.New("emulate needs root: it creates network namespaces, iptables or nftables rules and cgroups (try sudo; --dry-run shows the plan without root)")
	}
	ctx, stop := interruptible(c.Context())
	defer stop()
	bar := newProgress(stderr, f.quiet)
	r, err := emulate.Run(ctx, plan, emulate.Options{Log: stderr, Progress: func(done, total time.Duration) {
		bar.update(done, total, -1, fmt.Sprintf("%s of %s emulated", done.Round(time.Second), total.Round(time.Second)))
	}})
	bar.done()
	if r != nil {
		r.Origin = f.origin(c, args)
	}
	return f.end(ctx, c, stdout, src, r, err, sc.Spec.Duration.Duration, render)
}

// origin is runFlags' origin with --scale.
func (f *emulateFlags) origin(c *cobra.Command, args []string) *result.Origin {
	o := f.runFlags.origin(c, args)
	if c.Flags().Changed("scale") {
		o.Scale = f.scale
	}
	return o
}

// end writes what a run on real machines (emulate, cluster) measured and says how
// it ended. A run that a signal stopped (ctx done) is marked interrupted, over the
// real time it covered of the planned duration, and exits 130 even when it also
// failed (its errors are still shown); one stopped before its load started has no
// result.
func (f *runFlags) end(ctx context.Context, c *cobra.Command, stdout io.Writer, src source, r *result.Result, err error,
	planned time.Duration, render func(io.Writer, *result.Result) error) error {
	// A signal during the teardown, after the whole run, cut nothing short.
	stopped := ctx.Err() != nil && (r == nil || r.DurationS < planned.Seconds())
	if r == nil {
		if stopped {
			if err == context.Canceled {
				err = nil // the signal's own doing, said below
			}
			return errors.Join(err, interrupted{covered: "nothing: the run stopped before its load started"})
		}
		return err
	}
	if stopped {
		r.Interrupted, r.PlannedDurationS = true, planned.Seconds()
	}
	return errors.Join(f.finish(c, stdout, src, r, render), err)
}

// emulateInputError turns what emulate refuses into bad input, at the scenario line
// when it names a path.
func emulateInputError(err error, pos scenario.Positions) error {
	if d, ok := pos.Locate(err); ok {
		return badInput{d}
	}
	var size *emulate.SizeError
	if errors.As(err, &size) {
		return badInput{err}
	}
	return err
}

// printPlan shows where each pod would run and what emulate would not model.
func printPlan(w io.Writer, p *emulate.Plan) {
	l, sc := p.Layout, p.Scenario
	pods := []string{count(len(l.Nodes), "node"), count(len(l.Pods), "service pod"), count(len(l.Clients), "client pod")}
	if len(l.Background) > 0 {
		pods = append(pods, count(len(l.Background), "background pod"))
	}
	fmt.Fprintf(w, "%s: %s, kube-proxy %s\n", sc.Metadata.Name, strings.Join(pods, ", "), sc.Spec.Cluster.ProxyMode)
	var sidecars []string
	for _, n := range l.Nodes {
		var pods []string
		for _, p := range slices.Concat(l.Pods, l.Clients, l.Background) {
			if p.Node == n {
				pods = append(pods, p.Name)
			}
		}
		fmt.Fprintf(w, "  %-12s %s\n", n, strings.Join(pods, ", "))
	}
	for _, p := range l.Pods {
		if sc.Spec.Services[p.Index].Sidecar != nil {
			sidecars = append(sidecars, p.Name)
		}
	}
	for _, p := range l.Clients {
		if sc.Spec.Clients[p.Index].Sidecar != nil {
			sidecars = append(sidecars, p.Name)
		}
	}
	if len(sidecars) > 0 {
		fmt.Fprintf(w, "sidecars, nginx in Envoy's place: %s\n", strings.Join(sidecars, ", "))
	}
	if disks := p.Disks(); len(disks) > 0 {
		fmt.Fprintf(w, "node disks, throttled loop devices: %s\n", strings.Join(disks, ", "))
	}
	if name, node, ok := p.DNSPod(); ok {
		fmt.Fprintf(w, "cluster DNS for the headless Services: pod %s on %s\n", name, node)
	}
	for _, warn := range p.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}

// runCleanup removes crashed runs' leftovers.
func runCleanup(c *cobra.Command, args []string, stdout io.Writer) error {
	if len(args) > 0 {
		return badUsage(c, errors.New("--cleanup takes no FILE"))
	}
	if os.Geteuid() != 0 {
		return errors.New("emulate --cleanup needs root")
	}
	removed, err := emulate.Cleanup()
	for _, r := range removed {
		fmt.Fprintf(stdout, "removed %s\n", r)
	}
	if len(removed) == 0 && err == nil {
		fmt.Fprintln(stdout, "nothing to clean up")
	}
	return err
}
