// Package emutest holds what emulate's tests share: the gate that decides whether a
// test may build namespaces and rules for real, a serve pod started inside a
// namespace, and a probe of the machine's timer wake-ups. Only tests import it.
package emutest

import (
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"trafficlab/emulate/serve"
	"trafficlab/scenario"
)

// NeedRoot skips a test that needs root and these tools on PATH when it cannot run
// for real; with TRAFFICLAB_EMULATE_TEST=require (as ./test.sh sets it) it fails
// instead, so CI cannot pass by skipping the real thing.
func NeedRoot(t testing.TB, tools ...string) {
	t.Helper()
	cannot := func(why string) {
		t.Helper()
		msg := "real emulate test not run: " + why
		if os.Getenv("TRAFFICLAB_EMULATE_TEST") == "require" {
			t.Fatal(msg)
		}
		t.Skip(msg + " (TRAFFICLAB_EMULATE_TEST=require makes this a failure)")
	}
	if os.Geteuid() != 0 {
		cannot("needs root (network namespaces, netfilter, cgroups)")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			cannot(tool + " is not installed (./test.sh installs iproute2, nftables, iptables, conntrack)")
		}
	}
}

// Pod is a pod spec written as the scenario writes spec.services[].pod.
func Pod(t testing.TB, yaml string) *scenario.Pod {
	t.Helper()
	pod, diags := serve.ParsePod("pod", []byte(yaml))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return pod
}

// Serve starts pod's app as the pod named name, listening on addr inside network
// namespace ns, and terminates it when the test ends. inNetns is topo.InNetns,
// passed in so that topo's own tests can use this package.
func Serve(t testing.TB, inNetns func(string, func() error) error, ns, name string, addr netip.AddrPort, pod *scenario.Pod) *serve.Server {
	t.Helper()
	s, err := serve.New(serve.Config{Pod: pod, Name: name, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var ln net.Listener
	if err := inNetns(ns, func() (err error) { ln, err = net.Listen("tcp", addr.String()); return err }); err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(s.Terminate)
	return s
}

// WakeupProbe measures this machine's scheduling noise while a timing test runs, as
// emulate/delay meets it: an OS thread of its own sleeps period after period in
// ppoll with 1 ns of timer slack, as the relay's timer thread does, and records how
// late each wake-up came (Timer); after each wake-up it writes to a pipe that a
// goroutine reads through the runtime's netpoller, as the relay's read loop gets its
// packets, and that goroutine records how long the hand-off took (Handoff). A bound
// that allows for the machine's noise takes it from here, measured under the same
// load as the run it checks.
type WakeupProbe struct {
	stop chan struct{}
	done chan struct{}
	w    *os.File
	// Timer and Handoff are sorted when Stop returns.
	Timer, Handoff []time.Duration
}

// StartWakeupProbe starts the probe; Stop ends it.
func StartWakeupProbe(period time.Duration) (*WakeupProbe, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p := &WakeupProbe{stop: make(chan struct{}), done: make(chan struct{}), w: w}
	epoch := time.Now()
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer r.Close()
		var b [8]byte
		for {
			if _, err := io.ReadFull(r, b[:]); err != nil {
				return // Stop closed the write end
			}
			sent := time.Duration(binary.LittleEndian.Uint64(b[:]))
			p.Handoff = append(p.Handoff, time.Since(epoch)-sent)
		}
	}()
	go func() {
		defer close(p.done)
		runtime.LockOSThread() // the slack stays with this thread, which dies with the goroutine
		unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
		var b [8]byte
		// Bounded: ten minutes of periods at most.
		for range int(10 * time.Minute / period) {
			select {
			case <-p.stop:
				w.Close()
				<-read
				return
			default:
			}
			ts := unix.NsecToTimespec(int64(period))
			t0 := time.Now()
			unix.Ppoll(nil, &ts, nil)
			p.Timer = append(p.Timer, time.Since(t0)-period)
			binary.LittleEndian.PutUint64(b[:], uint64(time.Since(epoch)))
			w.Write(b[:])
		}
		<-p.stop
		w.Close()
		<-read
	}()
	return p, nil
}

// Stop ends the probe and sorts what it measured.
func (p *WakeupProbe) Stop() {
	close(p.stop)
	<-p.done
	slices.Sort(p.Timer)
	slices.Sort(p.Handoff)
}

// Quantile is the q-quantile of sorted durations (0 when there are none).
func Quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(int(q*float64(len(sorted))), len(sorted)-1)]
}
