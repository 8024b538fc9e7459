package sidecar

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"trafficlab/emulate/cgroup"
)

// Missing says what to install when nginx or its Lua module cannot be found.
const Missing = "an Istio sidecar is emulated with nginx and its Lua module (Debian and Ubuntu: apt install nginx libnginx-mod-http-lua)"

// startTimeout bounds a sidecar's start: every worker running.
const startTimeout = 15 * time.Second

// Proxy is a running sidecar: nginx's master process and its workers, in a control
// group of their own.
type Proxy struct {
	cfg     Config
	cmd     *exec.Cmd
	group   *cgroup.Group
	stderr  output
	exited  chan struct{}
	workers []int // the workers' process IDs, by worker
	admin   *http.Client
}

// find is nginx's executable and the directory of its dynamic modules, which must
// hold the Lua module; looked up once, as every sidecar of a run uses the same.
var find = sync.OnceValues(func() (nginx, error) {
	exe, modules, err := lookUp()
	return nginx{exe, modules}, err
})

type nginx struct{ exe, modules string }

func lookUp() (exe, modules string, err error) {
	// Debian installs it in /usr/sbin, which a user's PATH may not have.
	if exe, err = exec.LookPath("nginx"); err != nil {
		if exe, err = exec.LookPath("/usr/sbin/nginx"); err != nil {
			return "", "", errors.New(Missing)
		}
	}
	// nginx -V prints its configure arguments, --modules-path among them, on stderr.
	out, _ := exec.Command(exe, "-V").CombinedOutput()
	modules = "/usr/lib/nginx/modules"
	for _, f := range strings.Fields(string(out)) {
		if v, ok := strings.CutPrefix(f, "--modules-path="); ok {
			modules = v
		}
	}
	if _, err := os.Stat(filepath.Join(modules, "ngx_http_lua_module.so")); err != nil {
		return "", "", errors.New(Missing)
	}
	return exe, modules, nil
}

// Start runs the sidecar cfg in network namespace ns: it writes nginx's files under
// dir (which it creates), makes the control group groupName with a CPU limit of
// milliCPU (0: none), installs the interception rules, and starts nginx there
// through spawn (the caller's way to start a pod's processes). It returns once every
// worker runs. On an error nothing of it is left running.
func Start(ctx context.Context, spawn func(*exec.Cmd) error, ns, dir, groupName string, milliCPU int64, cfg Config) (p *Proxy, err error) {
	n, err := find()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	conf, err := cfg.nginxConf(dir, n.modules)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644); err != nil {
		return nil, err
	}
	// -w: the xtables lock is the host's, shared with every namespace's rules, as
	// emulate/proxyrules waits for it (iptablesWait).
	restore := exec.Command("ip", "netns", "exec", ns, "iptables-restore", "-w", "5", "--noflush")
	restore.Stdin = strings.NewReader(cfg.rules())
	if out, err := restore.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("sidecar's interception rules: %v: %s", err, bytes.TrimSpace(out))
	}
	p = &Proxy{cfg: cfg, exited: make(chan struct{})}
	if p.group, err = cgroup.Create(groupName, milliCPU); err != nil {
		return nil, err
	}
	sock := filepath.Join(dir, "admin.sock")
	p.admin = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	p.cmd = exec.Command("ip", "netns", "exec", ns, n.exe, "-p", dir, "-e", "stderr", "-c", filepath.Join(dir, "nginx.conf"))
	p.cmd.Stderr = &p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := spawn(p.cmd); err != nil {
		p.group.Remove()
		return nil, fmt.Errorf("sidecar: %w", err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	defer func() {
		if err != nil {
			err = errors.Join(err, p.Stop())
		}
	}()
	// ip netns exec execs nginx in place: this is the master, whose workers, forked
	// later, inherit its group; each is added again below in case it came first.
	if err := p.group.Add(p.cmd.Process.Pid); err != nil {
		return p, err
	}
	deadline := time.Now().Add(startTimeout)
	for {
		st, err := p.Stats(ctx)
		if err == nil && !slices.Contains(st.workers, 0) {
			p.workers = st.workers
			break
		}
		select {
		case <-p.exited:
			return p, fmt.Errorf("sidecar exited at its start: %s", p.tail())
		case <-ctx.Done():
			return p, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return p, fmt.Errorf("sidecar's workers did not start within %v: %s", startTimeout, p.tail())
		}
	}
	for _, pid := range p.workers {
		if err := p.group.Add(pid); err != nil {
			return p, err
		}
	}
	return p, nil
}

// Stats are the sidecar's counts since it started.
type Stats struct {
	// Requests it proxied, Retries it made, HTTP503 answers it gave.
	Requests, Retries, HTTP503 int64
	workers                    []int
}

// Stats asks the sidecar for its counts, over its admin socket. Its workers answer,
// so a sidecar whose workers are behind answers late: give ctx a deadline.
func (p *Proxy) Stats(ctx context.Context) (Stats, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://sidecar/stats", nil)
	if err != nil {
		return Stats{}, err
	}
	resp, err := p.admin.Do(req)
	if err != nil {
		return Stats{}, err
	}
	defer resp.Body.Close()
	st := Stats{workers: make([]int, max(p.cfg.Workers, 1))}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		n, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		if err != nil {
			return Stats{}, fmt.Errorf("sidecar stats: %q", sc.Text())
		}
		switch {
		case f[0] == "requests":
			st.Requests = n
		case f[0] == "retries":
			st.Retries = n
		case f[0] == "503":
			st.HTTP503 = n
		case f[0] == "pid" && len(f) == 3:
			if w, err := strconv.Atoi(f[1]); err == nil && w < len(st.workers) {
				st.workers[w] = int(n)
			}
		}
	}
	return st, sc.Err()
}

// WorkerCPU is the CPU time each worker has used: the first field of its
// /proc/PID/schedstat, the time on CPU in nanoseconds.
func (p *Proxy) WorkerCPU() ([]time.Duration, error) {
	out := make([]time.Duration, len(p.workers))
	for i, pid := range p.workers {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
		if err != nil {
			return nil, fmt.Errorf("sidecar worker %d: %w", i, err)
		}
		ns, err := strconv.ParseInt(strings.Fields(string(data))[0], 10, 64)
		if err != nil {
			return nil, err
		}
		out[i] = time.Duration(ns)
	}
	return out, nil
}

// Usage is the CPU the sidecar has used, all its processes together.
func (p *Proxy) Usage() (time.Duration, error) { return p.group.Usage() }

// Workers is how many workers it runs.
func (p *Proxy) Workers() int { return len(p.workers) }

// Stop ends nginx at once, master and workers (SIGKILL to every process in its
// group: the workers hold its stderr, so the master's end alone would not end the
// wait for it), and removes the group.
func (p *Proxy) Stop() error {
	err := p.group.Kill()
	if p.cmd.Process != nil {
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
		}
	}
	if err != nil {
		return err
	}
	return p.group.Remove()
}

func (p *Proxy) tail() string {
	s := strings.TrimSpace(p.stderr.String())
	if s == "" {
		return "(it printed nothing)"
	}
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-5):], "; ")
}

// output is what nginx writes on stderr, read while it writes.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(b)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}
