package load_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"trafficlab/emulate/load"
	"trafficlab/scenario"
)

// serverEnv makes the test binary a plain HTTP server (TestHelperServer), so the
// server runs in a process of its own, as a pod does, for both wrk and load.
const serverEnv = "TRAFFICLAB_LOAD_TEST_SERVER"

// overheadEnv runs TestOverheadAgainstWrk, which must have the machine to itself:
// beside other test binaries on two cores it measured wrk 11,408 and load 3,333
// requests a second, which says nothing about the generator.
const overheadEnv = "TRAFFICLAB_OVERHEAD_TEST"

// TestHelperServer is not a test: run with serverEnv set, it serves a pod's answer
// (a header naming the pod, a small body) until killed, after printing its address.
func TestHelperServer(t *testing.T) {
	if os.Getenv(serverEnv) == "" {
		t.Skip("helper process for TestOverheadAgainstWrk")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(ln.Addr())
	body := []byte(strings.Repeat("x", 100))
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header()[load.PodHeader] = []string{"web-0"}
		_, _ = w.Write(body)
	}))
}

// TestOverheadAgainstWrk is the overhead check of issue 7 item 4: wrk and load, in
// a closed loop with keep-alive and the same number of connections, against the
// same trivial server on this machine; load must reach 70 % of wrk's requests per
// second. Both share the machine's cores with the server, so the generator's own
// CPU cost per request is what separates them. Anything else running skews that, so
// it runs only when asked (overheadEnv), as `make test` does after the other tests.
func TestOverheadAgainstWrk(t *testing.T) {
	if os.Getenv(overheadEnv) == "" {
		t.Skip("measured alone: " + overheadEnv + "=1 go test -run TestOverheadAgainstWrk ./emulate/load (make test does)")
	}
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		t.Skip("wrk is not on PATH (apt-get install -y wrk)")
	}
	if testing.Short() {
		t.Skip("runs wrk and load for 3 s each")
	}
	target := "http://" + startServer(t) + "/"
	const conns, run = 4, 3 * time.Second
	measure := func() (wrkRPS, loadRPS float64) {
		out, err := exec.Command(wrk, "-t2", "-c"+strconv.Itoa(conns), "-d"+run.String(), target).CombinedOutput()
		if err != nil {
			t.Fatalf("wrk: %v\n%s", err, out)
		}
		m := regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("no Requests/sec in wrk's output:\n%s", out)
		}
		wrkRPS, _ = strconv.ParseFloat(string(m[1]), 64)
		rep, err := load.Run(context.Background(), load.Config{
			Target: target, Duration: run, Timeout: 2 * time.Second, Phases: []load.Phase{{Threads: conns}},
			Conn: load.Connections{Reuse: scenario.ReusePerThread, Protocol: scenario.ProtocolHTTP1},
		})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Requests.Failed > 0 || rep.Connections.Opened != conns {
			t.Fatalf("load: %d failed, %d connections, want 0 and %d", rep.Requests.Failed, rep.Connections.Opened, conns)
		}
		return wrkRPS, rep.ThroughputRPS
	}
	// A second round only if the first missed: other work on the machine can slow
	// one of the two runs.
	for round := 1; ; round++ {
		wrkRPS, loadRPS := measure()
		t.Logf("%d connections, closed loop, keep-alive, %v each: wrk %.0f req/s, load %.0f req/s (%.0f %% of wrk)",
			conns, run, wrkRPS, loadRPS, 100*loadRPS/wrkRPS)
		if loadRPS >= 0.7*wrkRPS {
			return
		}
		if round == 2 {
			t.Errorf("load is more than 30 %% behind wrk")
			return
		}
	}
}

// startServer runs TestHelperServer in a process of its own and returns its address.
func startServer(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperServer$")
	cmd.Env = append(os.Environ(), serverEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("helper server: %v", err)
	}
	return strings.TrimSpace(line)
}
