package emulate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"

	"trafficlab/emulate/cgroup"
	"trafficlab/emulate/load"
	"trafficlab/emulate/topo"
	"trafficlab/placement"
	"trafficlab/scenario"
)

// clientPod is one pod of a client Deployment: its namespace, its control group
// and its load generator, a `trafficlab load --stream` process inside both, which
// streams what it measures back (load.Stream).
type clientPod struct {
	placed placement.PlacedPod
	net    *topo.Pod
	group  *cgroup.Group
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *os.File
	stderr *tail
	exited chan struct{} // closed once the process has been waited for
	// limit is its CPU limit in cores, 0 without one; duration how long its load
	// runs.
	limit    float64
	duration time.Duration
	// cpuUsed is what its group used from the load's start to its end: the
	// duration, an interruption or the process's end, whichever came first.
	cpuUsed time.Duration
	report  *load.Report
}

// startClient starts client pod p on its node, its load waiting for a start time:
// a namespace, a control group with the CPU limit the kubelet would set from
// clients[].resources, and `trafficlab load` sending to target as the client spec
// says, resolving a named target at dns, counting answers over slow as slow. The process checks the spec as load.FromClient does before it waits.
func startClient(ctx context.Context, spawn func(*exec.Cmd) error, net *topo.Topology, exe string, p placement.PlacedPod, client *scenario.Client, target, dns string, duration, slow time.Duration, seed int64) (cp *clientPod, err error) {
	cp = &clientPod{placed: p, duration: duration, stderr: &tail{}, exited: make(chan struct{})}
	if cp.net, err = net.AddPod(p.Name, p.Node); err != nil {
		return nil, err
	}
	var milli int64
	if q, ok := client.Resources.Limits[corev1.ResourceCPU]; ok {
		milli, cp.limit = q.MilliValue(), q.AsApproximateFloat64()
	}
	if cp.group, err = cgroup.Create(net.Prefix()+p.Name, milli); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, cp.kill())
		}
	}()
	spec, err := json.Marshal(client)
	if err != nil {
		return cp, err
	}
	args := []string{"netns", "exec", cp.net.NS, exe, "load", "--client-json", string(spec), "--name", p.Name,
		"--target", target, "--duration", duration.String(), "--seed", strconv.FormatInt(seed, 10), "--stream"}
	if dns != "" {
		args = append(args, "--dns", dns)
	}
	if slow > 0 {
		args = append(args, "--slow-threshold", slow.String())
	}
	cp.cmd = exec.Command("ip", args...)
	cp.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // as a service pod's (startServer)
	errPipe, err := cp.cmd.StderrPipe()
	if err != nil {
		return cp, err
	}
	if cp.stdin, err = cp.cmd.StdinPipe(); err != nil {
		return cp, err
	}
	// A pipe of its own, not StdoutPipe's: Wait, which closes the exited channel,
	// would close that one while the report may still be unread.
	r, w, err := os.Pipe()
	if err != nil {
		return cp, err
	}
	cp.stdout, cp.cmd.Stdout = r, w
	err = spawn(cp.cmd)
	w.Close()
	if err != nil {
		return cp, fmt.Errorf("client pod %s: %w", p.Name, err)
	}
	ready := make(chan struct{})
	go cp.stderr.read(errPipe, load.ReadyPrefix, ready)
	go func() {
		_ = cp.cmd.Wait()
		close(cp.exited)
	}()
	// ip netns exec execs the load generator in place: this is its pid. Its start
	// runs in the group, and under a small limit takes a while: the run starts
	// once it waits.
	if err := cp.group.Add(cp.cmd.Process.Pid); err != nil {
		return cp, err
	}
	select {
	case <-ready:
		return cp, nil
	case <-cp.exited:
		return cp, fmt.Errorf("client pod %s exited before it was ready: %s", p.Name, cp.stderr)
	case <-ctx.Done():
		return cp, ctx.Err()
	case <-time.After(startTimeout):
		return cp, fmt.Errorf("client pod %s was not ready within %v: %s", p.Name, startTimeout, cp.stderr)
	}
}

// run starts the pod's load at start, reads what it streams (its intervals to tl,
// as load i's), and waits for the process to end; ctx's end interrupts it, and it
// reports what ran.
func (cp *clientPod) run(ctx context.Context, start time.Time, tl *load.Timeline, i int) error {
	if _, err := fmt.Fprintf(cp.stdin, "%d\n", start.UnixNano()); err != nil {
		return fmt.Errorf("client pod %s: %w: %s", cp.placed.Name, err, cp.stderr)
	}
	stop := context.AfterFunc(ctx, func() { _ = cp.cmd.Process.Signal(os.Interrupt) })
	defer stop()
	measured := make(chan struct{})
	go func() {
		defer close(measured)
		cp.cpuUsed = cp.measure(ctx, start)
	}()
	rep, err := load.ReadStream(cp.stdout, tl.Adder(i))
	cp.stdout.Close()
	<-cp.exited
	<-measured
	if err != nil {
		return fmt.Errorf("client pod %s: %w: %s", cp.placed.Name, err, cp.stderr)
	}
	cp.report = rep
	return nil
}

// measure is the CPU the group uses from start to the end of the load: its
// duration, ctx's end or the process's, whichever comes first. That is the run
// alone, as simulate counts it: the process's start before, and closing its pools
// and writing its report after, are left out. A busy machine reads the usage late,
// so the use over the window read is scaled to the window meant.
func (cp *clientPod) measure(ctx context.Context, start time.Time) time.Duration {
	at := func(t time.Time) (time.Time, error) {
		timer := time.NewTimer(time.Until(t))
		defer timer.Stop()
		select {
		case <-timer.C:
			return t, nil
		case <-ctx.Done():
			return time.Now(), ctx.Err()
		case <-cp.exited:
			return time.Now(), errors.New("exited")
		}
	}
	if _, err := at(start); err != nil {
		return 0
	}
	before, err := cp.group.Usage()
	from := time.Now()
	if err != nil {
		return 0
	}
	until, _ := at(start.Add(cp.duration))
	after, err := cp.group.Usage()
	read := time.Since(from)
	if err != nil || read <= 0 {
		return 0
	}
	meant := until.Sub(start)
	return time.Duration(float64(after-before) * float64(meant) / float64(read))
}

// kill ends the load generator at once, if it runs, and removes its group.
func (cp *clientPod) kill() error {
	if cp.stdout != nil {
		cp.stdout.Close() // again after a run: an error that changes nothing
	}
	if cp.group == nil {
		return nil // it failed before it had a group, or a process
	}
	return stopPod(cp.cmd, cp.exited, cp.group)
}
