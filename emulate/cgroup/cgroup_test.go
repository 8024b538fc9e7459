package cgroup

import (
	"fmt"
	"os"
	"os/exec"
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
	if n, err := g.Throttled(); err != nil || n < 8 {
		t.Errorf("throttled in %d periods (%v), want nearly all of 10", n, err)
	}
}
