package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// CPUs for taskset when pinning: the server on one, the measured client on the other.
const (
	serverCPU = "0"
	clientCPU = "1"
	anyCPU    = ""
)

// childLimit bounds every child process; loops inside stop earlier, at loopLimit.
const childLimit = 90 * time.Second

// env is what every case shares: the flags, this binary, a scratch directory and the
// 13-byte server.
type env struct {
	n, curlN, reps int
	bulk           int64
	pin            bool
	taskset        bool
	self, tmp      string
	srv            *daemon
	notes          []string
	started        time.Time
	others         string // CPU share other processes used during the run
}

// skipError is a case that cannot run here (a tool or module missing).
type skipError struct{ error }

func (e *env) start() (err error) {
	e.started = time.Now()
	if e.self, err = os.Executable(); err != nil {
		return err
	}
	if e.tmp, err = os.MkdirTemp("", "cpucost-"); err != nil {
		return err
	}
	_, err = exec.LookPath("taskset")
	e.taskset = err == nil
	switch {
	case e.pin && !e.taskset:
		e.notes = append(e.notes, "taskset not found: nothing is pinned")
	case e.pin && runtime.NumCPU() < 2:
		e.notes = append(e.notes, "one CPU: nothing is pinned")
	}
	e.srv, err = e.startDaemon(serverCPU, "serve")
	return err
}

// close stops the server and removes the scratch directory; again, it does nothing.
func (e *env) close() {
	if e.srv != nil {
		e.srv.close()
		e.srv = nil
	}
	if e.tmp != "" {
		os.RemoveAll(e.tmp)
		e.tmp = ""
	}
}

func (e *env) pinned() bool { return e.pin && e.taskset && runtime.NumCPU() >= 2 }

// command is argv on cpu (when pinning, or always for "1 core" runs with force), with
// proxy settings removed from its environment: every target is 127.0.0.1.
func (e *env) command(ctx context.Context, cpu string, force bool, argv ...string) *exec.Cmd {
	if cpu != anyCPU && e.taskset && (force || e.pinned()) {
		argv = append([]string{"taskset", "-c", cpu}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasSuffix(strings.ToLower(k), "_proxy") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	return cmd
}

// show is a command line as the report prints it, this binary as "cpucost".
func (e *env) show(cmd *exec.Cmd) string {
	args := append([]string(nil), cmd.Args...)
	for i, a := range args {
		if a == e.self {
			args[i] = "cpucost"
		} else if strings.ContainsAny(a, " ;$'\"") {
			args[i] = "'" + a + "'"
		}
	}
	return strings.Join(args, " ")
}

// usage is user and system CPU time.
type usage struct{ user, sys time.Duration }

func (u usage) cpu() time.Duration { return u.user + u.sys }

func rusage(ru *syscall.Rusage) usage {
	return usage{time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())}
}

// selfUsage is the CPU this process has spent so far, all threads.
func selfUsage() usage {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return rusage(&ru)
}

// procRun is one finished child process.
type procRun struct {
	usage  usage // wait4's rusage: the process and every descendant it waited for
	stdout string
	cmd    string
}

// runProc runs argv to completion (at most childLimit) on cpu.
func (e *env) runProc(cpu string, force bool, argv ...string) (procRun, error) {
	ctx, cancel := context.WithTimeout(context.Background(), childLimit)
	defer cancel()
	cmd := e.command(ctx, cpu, force, argv...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return procRun{}, fmt.Errorf("%s: %v: %s", e.show(cmd), err, strings.TrimSpace(stderr.String()))
	}
	return procRun{rusage(cmd.ProcessState.SysUsage().(*syscall.Rusage)), out.String(), e.show(cmd)}, nil
}

// srvStats is what the server counted: measured requests, and connections whose first
// request was a measured one (not a warm-up request to /warm).
type srvStats struct{ Conns, Reqs int64 }

func (s srvStats) connsPerReq() float64 {
	if s.Reqs == 0 {
		return 0
	}
	return float64(s.Conns) / float64(s.Reqs)
}

// counted runs f and returns what srv counted meanwhile.
func counted(srv *daemon, f func() error) (srvStats, error) {
	var before, after srvStats
	if err := srv.stats(&before, 0); err != nil {
		return srvStats{}, err
	}
	if err := f(); err != nil {
		return srvStats{}, err
	}
	if err := srv.stats(&after, 0); err != nil {
		return srvStats{}, err
	}
	return srvStats{after.Conns - before.Conns, after.Reqs - before.Reqs}, nil
}

// loopResult is what a client that measures itself prints as its last line: this
// binary's Go children and the Java program.
type loopResult struct {
	N        int     `json:"n"`      // requests attempted in the measured loop
	Failed   int     `json:"failed"` // of them, errors and timeouts
	CPUNs    int64   `json:"cpu_ns"` // the process's CPU during the loop
	WallNs   int64   `json:"wall_ns"`
	SysShare float64 `json:"sys_share"`
	Sched    int     `json:"scheduled,omitempty"` // vegeta: requests its pacer scheduled
}

// inside runs a client that measures itself against srv; the figure is its CPU per
// attempted request.
func (e *env) inside(srv *daemon, figure, cpu string, force bool, argv ...string) (sample, loopResult, error) {
	var res loopResult
	var p procRun
	st, err := counted(srv, func() (err error) {
		if p, err = e.runProc(cpu, force, argv...); err != nil {
			return err
		}
		lines := strings.Split(strings.TrimSpace(p.stdout), "\n")
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
			return fmt.Errorf("%s: output %q: %w", p.cmd, p.stdout, err)
		}
		return nil
	})
	if err != nil {
		return sample{}, res, err
	}
	if res.N == 0 {
		return sample{}, res, fmt.Errorf("%s: no request in %v", p.cmd, loopLimit)
	}
	n := float64(res.N)
	return sample{figure, "µs/req", float64(res.CPUNs) / 1e3 / n, &runInfo{
		N:     res.N,
		Rate:  n / (float64(res.WallNs) / 1e9),
		Conns: st.connsPerReq(),
		Errs:  float64(res.Failed) / n,
		Sys:   res.SysShare,
		Cmd:   p.cmd,
	}}, res, nil
}

// loopCounts is what an external client reports of its measured loop.
type loopCounts struct {
	attempts, failed int
	wall             time.Duration // the loop's own, without the process's start
}

// differential runs argv(n) and the baseline argv(n0) against srv; the figure is the
// difference in the processes' CPU per request of difference. parse reads the client's
// report from what it printed; the rate is the measured run's own.
func (e *env) differential(srv *daemon, figure string, n0, n int, argv func(n int) []string,
	parse func(stdout string) (loopCounts, error)) (sample, error) {
	var runs [2]procRun
	var counts [2]loopCounts
	var st srvStats
	for i, count := range []int{n0, n} {
		s, err := counted(srv, func() (err error) {
			if runs[i], err = e.runProc(clientCPU, false, argv(count)...); err != nil {
				return err
			}
			if counts[i], err = parse(runs[i].stdout); err != nil {
				return fmt.Errorf("%s: %w", runs[i].cmd, err)
			}
			return nil
		})
		if err != nil {
			return sample{}, err
		}
		st = s // the run of n
	}
	dn := counts[1].attempts - counts[0].attempts
	if dn <= 0 {
		return sample{}, fmt.Errorf("%s: %d requests, baseline %d", runs[1].cmd, counts[1].attempts, counts[0].attempts)
	}
	dcpu := runs[1].usage.cpu() - runs[0].usage.cpu()
	return sample{figure, "µs/req", float64(dcpu.Microseconds()) / float64(dn), &runInfo{
		N:     dn,
		Rate:  float64(counts[1].attempts) / counts[1].wall.Seconds(),
		Conns: st.connsPerReq(),
		Errs:  float64(counts[1].failed-counts[0].failed) / float64(dn),
		Sys:   float64(runs[1].usage.sys) / float64(runs[1].usage.cpu()), // a difference of samples strays past 0–100%
		Cmd:   runs[1].cmd,
	}}, nil
}

// perConn is the figure of a connection-per-request run minus a keep-alive run's.
func perConn(figure string, newConn, reused sample) sample {
	return sample{figure, "µs/conn", newConn.Value - reused.Value, nil}
}

// repeat runs one repetition of a case e.reps times.
func (e *env) repeat(rep func() ([]sample, error)) ([]sample, error) {
	var all []sample
	for range e.reps {
		s, err := rep()
		if err != nil {
			return nil, err
		}
		all = append(all, s...)
	}
	return all, nil
}

// A daemon is a child process of this binary that serves until its stdin closes: it
// prints its address first, then answers each line with its counters as JSON.
type daemon struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	in     io.WriteCloser
	out    *bufio.Scanner
	addr   string
	shown  string // its command line, for the report
}

func (e *env) startDaemon(cpu string, args ...string) (*daemon, error) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := e.command(ctx, cpu, false, append([]string{e.self, "child"}, args...)...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, err
	}
	d := &daemon{cmd: cmd, cancel: cancel, in: in, out: bufio.NewScanner(out), shown: e.show(cmd)}
	if !d.out.Scan() {
		d.close()
		return nil, fmt.Errorf("%s: no address", d.shown)
	}
	d.addr = d.out.Text()
	return d, nil
}

func (d *daemon) url() string { return "http://" + d.addr + "/" }

// stats asks the daemon for its counters, within 10 s, saying how many connections
// the client keeps open to it (the relay waits for the others to close).
func (d *daemon) stats(v any, open int) error {
	if _, err := fmt.Fprintln(d.in, open); err != nil {
		return err
	}
	t := time.AfterFunc(10*time.Second, d.cancel) // a daemon that does not answer is killed
	defer t.Stop()
	if !d.out.Scan() {
		return errors.Join(errors.New("daemon: no stats"), d.out.Err())
	}
	return json.Unmarshal(d.out.Bytes(), v)
}

// close ends the daemon: stdin closed, then killed if it has not exited within 5 s.
func (d *daemon) close() {
	d.in.Close()
	t := time.AfterFunc(5*time.Second, d.cancel)
	d.cmd.Wait()
	t.Stop()
	d.cancel()
}
