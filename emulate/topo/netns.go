package topo

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// netnsDir is where `ip netns add` pins named namespaces (iproute2's NETNS_RUN_DIR).
const netnsDir = "/var/run/netns"

// ipTimeout bounds each iproute2 command: they return in milliseconds, and a hung
// one must fail the run rather than hold it.
const ipTimeout = 10 * time.Second

// ip runs iproute2 with args and returns its error with what it printed.
func ip(args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), ipTimeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "ip", args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// ipBatch runs many iproute2 commands in one process (ip -batch), one per line:
// building a topology is hundreds of commands, and a process each would dominate.
func ipBatch(ns string, lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), ipTimeout)
	defer cancel()
	args := []string{"-batch", "-"}
	if ns != "" {
		args = append([]string{"-netns", ns}, args...)
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "ip", args...)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ip -batch in %q: %v: %s", ns, err, strings.TrimSpace(out.String()))
	}
	return nil
}

// namespaces lists the named network namespaces whose name starts with prefix.
func namespaces(prefix string) ([]string, error) {
	entries, err := os.ReadDir(netnsDir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// InNetns runs f on an OS thread of its own that has joined the named network
// namespace: sockets f opens (listeners, dials) live in that namespace and keep
// working from any goroutine afterwards. The thread is never returned to Go's pool
// (it stays locked when its goroutine ends, so the runtime discards it): no other
// goroutine can find itself in the namespace by accident.
func InNetns(name string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		fd, err := unix.Open(filepath.Join(netnsDir, name), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- fmt.Errorf("network namespace %s: %w", name, err)
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("joining network namespace %s: %w", name, err)
			return
		}
		errc <- f()
	}()
	return <-errc
}

// Dialer opens TCP connections from inside a network namespace, for a client that
// runs in this process (the load generator): a socket belongs to the namespace of
// the thread that creates it, so dials are handed to goroutines locked on threads
// that joined the namespace.
type Dialer struct {
	reqs chan dialReq
	done chan struct{}
}

type dialReq struct {
	ctx           context.Context
	network, addr string
	reply         chan dialResult
}

type dialResult struct {
	c   net.Conn
	err error
}

// dialers is how many dials may be under way at once: a dial on a veth takes tens of
// microseconds, so a few threads keep up with a new connection per request.
const dialers = 4

// NewDialer starts a Dialer in the named namespace; Close stops it.
func NewDialer(ns string) (*Dialer, error) {
	d := &Dialer{reqs: make(chan dialReq), done: make(chan struct{})}
	started := make(chan error, 2*dialers) // each sends once in, once at the end
	for range dialers {
		go func() {
			// Started in the namespace and never left: InNetns discards the thread.
			started <- InNetns(ns, func() error {
				started <- nil
				var nd net.Dialer
				for {
					select {
					case r := <-d.reqs:
						c, err := nd.DialContext(r.ctx, r.network, r.addr)
						r.reply <- dialResult{c, err}
					case <-d.done:
						return nil
					}
				}
			})
		}()
	}
	for range dialers {
		if err := <-started; err != nil {
			d.Close()
			return nil, err
		}
	}
	return d, nil
}

// DialContext dials addr from inside the namespace.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	r := dialReq{ctx, network, addr, make(chan dialResult, 1)}
	select {
	case d.reqs <- r:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-d.done:
		return nil, net.ErrClosed
	}
	res := <-r.reply
	return res.c, res.err
}

// Close stops the Dialer's goroutines; connections it opened stay open.
func (d *Dialer) Close() { close(d.done) }

// Exec runs a command inside the named namespace (ip netns exec), with stdin, and
// returns its error with what it printed.
func Exec(ctx context.Context, ns string, stdin []byte, name string, args ...string) error {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns, name}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s in %s: %v: %s", name, strings.Join(args, " "), ns, err, strings.TrimSpace(out.String()))
	}
	return nil
}
