package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
	"trafficlab/emulate/emutest"
)

// A busy process under a 200m limit gets 20 ms of CPU per 100 ms period: over 1 s of
// wall time, 200 ms, give or take a period's quota at each end (40 ms).
func TestLimitCapsABusyProcess(t *testing.T) {
	emutest.NeedRoot(t)
	g, err := Create(fmt.Sprintf("tl-test-%d", os.Getpid()), 200)
	if err != nil {
		t.Fatal(err)
	}
	busy := exec.Command("sh", "-c", "while :; do :; done")
	if err := busy.Start(); err != nil {
		g.Remove()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		busy.Process.Kill()
		busy.Wait()
		if err := g.Remove(); err != nil {
			t.Error(err)
		}
		for _, d := range g.dirs {
			if _, err := os.Stat(d); !os.IsNotExist(err) {
				t.Errorf("%s is left behind", d)
			}
		}
	})
	if err := g.Add(busy.Process.Pid); err != nil {
		t.Fatal(err)
	}
	start, err := g.Usage()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	end, err := g.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if used := end - start; used < 160*time.Millisecond || used > 240*time.Millisecond {
		t.Errorf("used %v of CPU in 1 s under 200m, want 200ms ± 40ms", used)
	}
	// Each period the loop runs its 20 ms and is stalled until the next: at most
	// 80 ms a throttled period, less when other processes kept it off the CPU
	// before it had spent its quota (CI runs other tests beside this one).
	b, err := g.Stat()
	if err != nil || b.Periods < 10 || b.Throttled < 8 || b.ThrottledTime <= 0 || b.ThrottledTime > time.Duration(b.Throttled)*80*time.Millisecond+10*time.Millisecond {
		t.Errorf("cpu.stat %+v (%v): want nearly all of 10+ periods throttled, up to 80ms each", b, err)
	}
}

// Cleanup kills what runs in a dead run's groups and removes them, and leaves
// every other group alone.
func TestCleanupRemovesOnlyStaleGroups(t *testing.T) {
	emutest.NeedRoot(t)
	stale := fmt.Sprintf("tl-stale-%d", os.Getpid())
	live := fmt.Sprintf("tl-live-%d", os.Getpid())
	var procs []*exec.Cmd
	for _, name := range []string{stale, live} {
		g, err := Create(name, 0)
		if err != nil {
			t.Fatal(err)
		}
		sleeper := exec.Command("sleep", "30")
		if err := sleeper.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, sleeper)
		t.Cleanup(func() {
			sleeper.Process.Kill()
			sleeper.Wait()
			g.Remove()
		})
		if err := g.Add(sleeper.Process.Pid); err != nil {
			t.Fatal(err)
		}
	}
	waited := make(chan error, 1)
	go func() { waited <- procs[0].Wait() }()
	done, err := Cleanup(func(name string) bool { return name == stale })
	if err != nil || len(done) != 1 || done[0] != stale {
		t.Fatalf("Cleanup removed %v (%v), want [%s]", done, err, stale)
	}
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Error("the stale group's process is still running")
	}
	if err := procs[1].Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the live group's process is gone: %v", err)
	}
}
