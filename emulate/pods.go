package emulate

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"trafficlab/emulate/cgroup"
	"trafficlab/emulate/topo"
	"trafficlab/scenario"
)

// podPort is the port every pod's app listens on (the Services' targetPort);
// servicePort the port of every ClusterIP.
const (
	podPort     = 8080
	servicePort = 80
)

// startTimeout bounds a pod's start: its process listening.
const startTimeout = 15 * time.Second

// server is one service pod: its place in the network, its control group and its
// app, a `trafficlab serve` process inside both.
type server struct {
	name, service, node string
	net                 *topo.Pod
	group               *cgroup.Group
	cmd                 *exec.Cmd
	stderr              *tail
	exited              chan struct{} // closed once the process has ended and been waited for
	// log is the runtime's writer of its stdout to its node's disk; nil when its
	// access log goes nowhere.
	log *podLog
	// cpuAtStart and bandwidthAtStart are the group's CPU use and throttling when
	// the load started (or the pod did, if later).
	cpuAtStart       time.Duration
	bandwidthAtStart cgroup.Bandwidth

	// State as the API server and kubelet would have it, and when it changed
	// (since the run's start), guarded by the cluster's lock.
	ready, deleting, gone              bool
	created, readyAt, deletedAt, ended time.Duration
}

// addr is the pod's endpoint.
func (s *server) addr() netip.AddrPort { return netip.AddrPortFrom(s.net.IP, podPort) }

// startServer starts a service pod on its node: its namespace, a control group
// with the CPU limit the kubelet would set (model/node.MilliCPUToQuota, through
// emulate/cgroup), and its app listening on podPort.
// spawn starts the process (spawner.start); exited is called once the app has
// ended, for whatever reason, if it got as far as listening. args are more flags of
// `trafficlab serve` (its calls: cluster.serveArgs). logFile is where the runtime
// writes the app's stdout, its access log, on the node's disk; "" discards it.
func startServer(ctx context.Context, spawn func(*exec.Cmd) error, net *topo.Topology, exe, name, service, nodeName string, pod *scenario.Pod, seed int64, args []string, logFile string, exited func(*server)) (s *server, err error) {
	s = &server{name: name, service: service, node: nodeName, stderr: &tail{}, exited: make(chan struct{}), readyAt: -1}
	if s.net, err = net.AddPod(name, nodeName); err != nil {
		return nil, err
	}
	var milli int64
	if pod.CPU != nil {
		milli = pod.CPU.MilliValue()
	}
	if s.group, err = cgroup.Create(net.Prefix()+name, milli); err != nil {
		return nil, err
	}
	spec, err := json.Marshal(pod)
	if err != nil {
		s.group.Remove()
		return nil, err
	}
	s.cmd = exec.Command("ip", append([]string{"netns", "exec", s.net.NS, exe, "serve", "--pod-json", string(spec),
		"--name", name, "--seed", strconv.FormatInt(seed, 10), "--listen", fmt.Sprintf(":%d", podPort)}, args...)...)
	s.cmd.Stdout = io.Discard // the access log, when no disk of the scenario's takes it
	if logFile != "" {
		if s.log, err = startPodLog(spawn, exe, logFile, s.cmd); err != nil {
			s.group.Remove()
			return nil, fmt.Errorf("pod %s: %w", name, err)
		}
	}
	// A pod must not outlive the run: if this process dies, the kernel kills it.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	errPipe, err := s.cmd.StderrPipe()
	if err != nil {
		s.group.Remove()
		return nil, err
	}
	err = spawn(s.cmd)
	if s.log != nil {
		s.log.started() // the app has its end of the pipe, or failed to start
	}
	if err != nil {
		s.group.Remove()
		return nil, fmt.Errorf("pod %s: %w", name, err)
	}
	listening := make(chan struct{})
	go s.stderr.read(errPipe, " listening on ", listening) // serve prints one line then
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	// ip netns exec execs the app in place, so this is the app's pid. It runs
	// unlimited for the few milliseconds until here, before it listens.
	if err := s.group.Add(s.cmd.Process.Pid); err != nil {
		s.kill()
		return nil, err
	}
	select {
	case <-listening:
		s.cpuAtStart, _ = s.group.Usage()
		s.bandwidthAtStart, _ = s.group.Stat()
		go func() {
			<-s.exited
			exited(s)
		}()
		return s, nil
	case <-s.exited:
		s.group.Remove()
		return nil, fmt.Errorf("pod %s exited before listening: %s", name, s.stderr)
	case <-ctx.Done():
		s.kill()
		return nil, ctx.Err()
	case <-time.After(startTimeout):
		s.kill()
		return nil, fmt.Errorf("pod %s did not listen within %v: %s", name, startTimeout, s.stderr)
	}
}

// spawner starts processes from one OS thread that lives as long as the run. The
// kernel sends a child its parent-death signal (Pdeathsig) when the thread that
// forked it exits, not the process (prctl(2) PR_SET_PDEATHSIG; golang/go#27505),
// and Go ends the threads that locked goroutines leave behind, as topo.InNetns's
// do: a pod started from one of those would be killed mid-run.
type spawner struct {
	reqs chan func()
	done chan struct{}
}

func newSpawner() *spawner {
	sp := &spawner{reqs: make(chan func()), done: make(chan struct{})}
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		for f := range sp.reqs {
			f()
		}
		close(sp.done)
	}()
	return sp
}

// start starts cmd from the spawner's thread.
func (sp *spawner) start(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	sp.reqs <- func() { errc <- cmd.Start() }
	return <-errc
}

// close ends the thread, after every process it started has been killed.
func (sp *spawner) close() {
	close(sp.reqs)
	<-sp.done
}

// read keeps the last lines a process writes on r, and closes seen at the first
// line that holds marker: the line a pod's process prints once it is ready.
func (t *tail) read(r io.Reader, marker string, seen chan<- struct{}) {
	sc := bufio.NewScanner(r)
	said := false
	for sc.Scan() {
		line := sc.Text()
		t.add(line)
		if !said && strings.Contains(line, marker) {
			said = true
			close(seen)
		}
	}
}

// kill ends the app at once (SIGKILL), waits for it and removes its group, then
// waits for the runtime's writer of its log to finish.
func (s *server) kill() error {
	err := stopPod(s.cmd, s.exited, s.group)
	if s.log != nil {
		err = errors.Join(err, s.log.wait())
	}
	return err
}

// stopPod ends a pod's process at once (SIGKILL) if it started, waits until it has
// been waited for (exited closes), then kills whatever is left in its group and
// removes the group.
func stopPod(cmd *exec.Cmd, exited <-chan struct{}, group *cgroup.Group) error {
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
		}
	}
	if err := group.Kill(); err != nil {
		return err
	}
	return group.Remove()
}

// cpu is the CPU the pod's group has used since the load started.
func (s *server) cpu() (time.Duration, error) {
	used, err := s.group.Usage()
	return used - s.cpuAtStart, err
}

// tail is the last lines a process wrote, for error messages.
type tail struct {
	mu    sync.Mutex
	lines []string
}

const tailLines = 5

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > tailLines {
		t.lines = t.lines[1:]
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return "(it printed nothing)"
	}
	return strings.Join(t.lines, "; ")
}
