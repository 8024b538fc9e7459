package serve

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Credit accrues by the estimate per request and is taken off whole draws, so short
// draws do not lose it, and it stops at creditRequests requests' worth.
func TestOverheadTake(t *testing.T) {
	us := func(x int) time.Duration { return time.Duration(x) * time.Microsecond }
	for _, tc := range []struct {
		name     string
		estimate time.Duration
		draws    []time.Duration
		want     []time.Duration
	}{
		{"none measured", 0, []time.Duration{us(300), us(10)}, []time.Duration{us(300), us(10)}},
		{"long draws", us(100), []time.Duration{us(300), us(500)}, []time.Duration{us(200), us(400)}},
		{"short draws carry credit", us(100), []time.Duration{us(40), us(40), us(300)}, []time.Duration{0, 0, us(80)}},
		{"credit capped", us(10), append(make([]time.Duration, 20), us(500)), append(make([]time.Duration, 20), us(500-10*creditRequests))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o overhead
			o.estimate.Store(int64(tc.estimate))
			for i, d := range tc.draws {
				if got := o.take(d); got != tc.want[i] {
					t.Errorf("draw %d of %v: burn %v, want %v", i, d, got, tc.want[i])
				}
			}
		})
	}
}

// overheadChild, set in a test's child process, makes TestMain serve a 500 µs pod
// on loopback, with SubtractOverhead as its value says, until stdin closes.
const overheadChild = "TRAFFICLAB_SERVE_OVERHEAD_CHILD"

func TestMain(m *testing.M) {
	if v := os.Getenv(overheadChild); v != "" {
		os.Exit(serveChild(v == "subtract"))
	}
	os.Exit(m.Run())
}

func serveChild(subtract bool) int {
	pod, diags := ParsePod("child", []byte("serviceTime: {distribution: constant, value: 500us}"))
	if pod == nil {
		fmt.Fprintln(os.Stderr, diags)
		return 2
	}
	s, err := New(Config{Pod: pod, Name: "web-0", SubtractOverhead: subtract})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println(ln.Addr())
	go func() {
		bufio.NewReader(os.Stdin).ReadString(0) // EOF: the test is done
		s.cut()
	}()
	s.Serve(ln)
	return 0
}

// ticksCPU is a process's CPU time, user and system, from /proc/PID/stat (proc(5):
// fields 14 and 15, in clock ticks of 10 ms: USER_HZ is 100 on Linux).
func ticksCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:])) // fields from 3 on
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// A server process that subtracts its overhead spends the service time of CPU per
// request, all in; one that burns in full spends more. Measured in a process of its
// own, as `trafficlab serve` runs, over requests after a warm-up that lets the
// estimate settle (a period of overheadPeriod).
//
// Tolerance: the tick counts are within 10 ms each, 20 ms over `measured` requests
// (10 µs a request); the estimate of one period is an average over at least
// overheadSample requests of a cost that varies with wake-ups and GC, which the
// other 40 µs allow for (the cost itself measured 100–200 µs here).
func TestSubtractOverhead(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	const service = 500 * time.Microsecond
	const warmup, measured = 1000, 2000
	const tolerance = 50 * time.Microsecond
	perRequest := map[string]time.Duration{}
	for _, mode := range []string{"subtract", "full"} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), overheadChild+"="+mode)
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
		addr, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		addr = strings.TrimSpace(addr)
		c := client(t, false)
		deadline := time.Now().Add(30 * time.Second)
		var cpu0 time.Duration
		for i := range warmup + measured {
			if i == warmup {
				cpu0 = ticksCPU(t, cmd.Process.Pid)
			}
			if _, _, err := get(c, addr, "/"); err != nil {
				t.Fatal(err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d requests took over 30s", mode, i)
			}
		}
		perRequest[mode] = (ticksCPU(t, cmd.Process.Pid) - cpu0) / measured
	}
	t.Logf("server CPU a request: %v subtracting its overhead, %v burning in full; service time %v",
		perRequest["subtract"], perRequest["full"], service)
	if got := perRequest["subtract"]; got < service-tolerance || got > service+tolerance {
		t.Errorf("subtracting: %v of CPU a request, want %v ± %v", got, service, tolerance)
	}
	if got := perRequest["full"]; got < service-10*time.Microsecond {
		t.Errorf("burning in full: %v of CPU a request, want at least %v", got, service)
	}
}
