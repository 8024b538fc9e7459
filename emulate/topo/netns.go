package topo

import (
	"bytes"
	"context"
	"fmt"
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
