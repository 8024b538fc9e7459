package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"trafficlab/report"
	"trafficlab/result"
)

// long is good running for a day: hours of wall time, so only a signal ends it.
var long = strings.Replace(good, "duration: 2s", "duration: 24h", 1)

// buildBinary builds trafficlab into dir, as a user runs it.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "trafficlab")
	if out, err := exec.Command("go", "build", "-o", bin, "trafficlab/cmd/trafficlab").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// wallTime runs bin with args to the end and returns how long that took.
func wallTime(t *testing.T, bin string, args ...string) time.Duration {
	t.Helper()
	start := time.Now()
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return time.Since(start)
}

// stopped is a run a signal ended: its exit status, its stdout, and how long it
// took to exit after the signal.
type stopped struct {
	code     int
	stdout   []byte
	stderr   string
	stopTime time.Duration
}

// signalRun starts bin with args, waits for ready to say the run is under way,
// sends sig and waits for the process to end.
func signalRun(t *testing.T, bin string, sig syscall.Signal, ready func() bool, args ...string) stopped {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); !ready(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("%v: not under way after 30 s", args)
		}
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	var err error
	select {
	case err = <-exited:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("%v: still running 30 s after %v", args, sig)
	}
	s := stopped{stopTime: time.Since(sent), stdout: out.Bytes(), stderr: errb.String()}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		s.code = exit.ExitCode() // -1 when the signal itself killed it
	}
	return s
}

// fileHasData says whether path exists and is not empty.
func fileHasData(path string) func() bool {
	return func() bool {
		st, err := os.Stat(path)
		return err == nil && st.Size() > 0
	}
}

// SIGINT and SIGTERM stop a simulation within a second: the result of the time
// simulated is written, marked interrupted, and the exit status is 130. The
// bound is one second plus the process's own start, measured here, since the
// exit after the signal pays some of the same costs (the runtime, writing).
func TestSignalsStopASimulationAndKeepWhatRan(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	start := wallTime(t, bin, "version")
	file := writeTemp(t, "long.yaml", long)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			// The requests CSV fills as the run goes: once it has data, the run is
			// under way and its signal handling installed.
			csv := filepath.Join(t.TempDir(), "requests.csv")
			s := signalRun(t, bin, sig, fileHasData(csv), "simulate", file, "-o", "json", "-q", "--requests", csv, "--set", "spec.services[0].replicas=4")
			if s.code != exitInterrupted {
				t.Fatalf("exit %d, want %d; stderr:\n%s", s.code, exitInterrupted, s.stderr)
			}
			if bound := time.Second + start; s.stopTime > bound {
				t.Errorf("exited %v after %v, want within %v (1 s and the %v a start takes)", s.stopTime, sig, bound, start)
			}
			var r result.Result
			if err := json.Unmarshal(s.stdout, &r); err != nil {
				t.Fatalf("stdout is not a result: %v\n%.300s", err, s.stdout)
			}
			t.Logf("start %v; exited %v after %v, %v s simulated, %d requests", start, s.stopTime, sig, r.DurationS, r.Requests.Total)
			if !r.Interrupted || r.PlannedDurationS != 86400 || r.DurationS <= 0 || r.DurationS >= 86400 || r.Requests.Total == 0 {
				t.Errorf("interrupted %v, planned %v s, covered %v s, %d requests; want true, 86400, between, some",
					r.Interrupted, r.PlannedDurationS, r.DurationS, r.Requests.Total)
			}
			if want := float64(r.Requests.OK) / r.DurationS; abs(r.ThroughputRPS-want) > 0.001*want {
				t.Errorf("throughput %v/s, want the requests over the time covered, %v/s", r.ThroughputRPS, want)
			}
			if r.Origin == nil || r.Origin.File != file || len(r.Origin.Sets) != 1 {
				t.Errorf("origin %+v, want the file and the --set", r.Origin)
			}
			if !strings.Contains(s.stderr, "interrupted: the result covers the first") {
				t.Errorf("stderr does not say the run was interrupted:\n%s", s.stderr)
			}
		})
	}
}

func abs(x float64) float64 { return max(x, -x) }

// An interrupted sweep writes the points that finished, marked incomplete, and
// exits 130. Its first two points take milliseconds, its third a day: the signal
// comes when the first two have surely finished, three times the time a sweep of only
// those takes, measured here, start included.
func TestSignalStopsASweepAndKeepsTheFinishedPoints(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	file := writeTemp(t, "s.yaml", good)
	quick := wallTime(t, bin, "sweep", file, "--set", "spec.duration=1s,2s", "-j", "1", "-q", "-o", "json")
	since := time.Now()
	s := signalRun(t, bin, syscall.SIGINT, func() bool { return time.Since(since) > 3*quick },
		"sweep", file, "--set", "spec.duration=1s,2s,24h", "-j", "1", "-q", "-o", "json")
	if s.code != exitInterrupted {
		t.Fatalf("exit %d, want %d; stderr:\n%s", s.code, exitInterrupted, s.stderr)
	}
	if bound := time.Second + quick; s.stopTime > bound {
		t.Errorf("exited %v after SIGINT, want within %v", s.stopTime, bound)
	}
	var sw result.Sweep
	if err := json.Unmarshal(s.stdout, &sw); err != nil {
		t.Fatalf("stdout is not a sweep: %v\n%.300s", err, s.stdout)
	}
	t.Logf("the quick points' sweep took %v; exited %v after SIGINT", quick, s.stopTime)
	var kept []string
	for _, p := range sw.Points {
		kept = append(kept, p.Values[0])
	}
	if !sw.Interrupted || sw.PlannedPoints != 3 || strings.Join(kept, ",") != "1s,2s" {
		t.Errorf("interrupted %v, planned %d, kept %v; want true, 3, [1s 2s]", sw.Interrupted, sw.PlannedPoints, kept)
	}
}

// runCLIContext runs the CLI as Main does, with ctx standing in for the signals.
func runCLIContext(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

// cancelAfter is a context done after d, as if a signal came then.
func cancelAfter(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// The text report of an interrupted simulation says so before anything else.
func TestInterruptedSimulationTextSaysSoFirst(t *testing.T) {
	file := writeTemp(t, "long.yaml", long)
	code, out, errOut := runCLIContext(cancelAfter(t, 200*time.Millisecond), "simulate", file, "-q")
	if code != exitInterrupted {
		t.Fatalf("exit %d, want %d: %s", code, exitInterrupted, errOut)
	}
	if !strings.HasPrefix(out, "Interrupted after ") || !strings.Contains(out, "of the 24h planned (simulated time)") {
		t.Errorf("the report does not open with the interruption:\n%.400s", out)
	}
	code, out, _ = runCLI("simulate", writeTemp(t, "s.yaml", good), "-q")
	if code != exitOK || strings.Contains(out, "Interrupted after") {
		t.Errorf("a run that ended: exit %d, report says interrupted:\n%.300s", code, out)
	}
}

// emulate's end: a signal marks the result interrupted and exits 130, unless the
// run had covered its whole duration; its failures are still reported.
func TestEmulateEndsLikeSimulate(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name        string
		ctx         context.Context
		covered     float64 // nil result when negative
		err         error
		code        int
		interrupted bool
		stderr      string
	}{
		{"stopped midway", done, 5, nil, exitInterrupted, true, "interrupted: the result covers the first 5s of the 1m planned (real time)"},
		{"stopped midway, failing", done, 5, errors.New("tearing down: busy"), exitInterrupted, true, "tearing down: busy"},
		{"stopped in the teardown", done, 60, nil, exitOK, false, ""},
		{"stopped before the load", done, -1, context.Canceled, exitInterrupted, false, "interrupted: the result covers nothing: the run stopped before its load started"},
		{"stopped before the load, failing", done, -1, errors.New("tearing down: busy"), exitInterrupted, false, "tearing down: busy"},
		{"ran its course", context.Background(), 60, nil, exitOK, false, ""},
		{"failed", context.Background(), 60, errors.New("tearing down: busy"), exitFailure, false, "tearing down: busy"},
	} {
		var f emulateFlags
		c := &cobra.Command{}
		f.register(c)
		f.output = "json"
		var r *result.Result
		if tc.covered >= 0 {
			r = &result.Result{Engine: "emulate", Scenario: "s", DurationS: tc.covered}
		}
		var out bytes.Buffer
		err := f.end(tc.ctx, c, &out, source{}, r, tc.err, time.Minute, report.JSON)
		if code := exitCode(err); code != tc.code || (tc.stderr != "" && !strings.Contains(err.Error(), tc.stderr)) {
			t.Errorf("%s: exit %d, error %v; want %d and %q", tc.name, code, err, tc.code, tc.stderr)
		}
		if err != nil && strings.Contains(err.Error(), "context canceled") {
			t.Errorf("%s: the error repeats the signal's doing: %v", tc.name, err)
		}
		if r == nil {
			if out.Len() > 0 {
				t.Errorf("%s: wrote %s without a result", tc.name, out.String())
			}
			continue
		}
		var got result.Result
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got.Interrupted != tc.interrupted || (tc.interrupted && got.PlannedDurationS != 60) {
			t.Errorf("%s: interrupted %v, planned %v; want %v", tc.name, got.Interrupted, got.PlannedDurationS, tc.interrupted)
		}
	}
}

// load, stopped by a signal, writes what it measured marked interrupted and exits
// 130, as simulate does.
func TestInterruptedLoadIsMarked(t *testing.T) {
	srv := podsServer(t)
	for _, format := range []string{"json", "text"} {
		code, out, errOut := runCLIContext(cancelAfter(t, 300*time.Millisecond), "load", "--target", srv.URL, "--threads", "2", "--duration", "1h", "-q", "-o", format)
		if code != exitInterrupted {
			t.Fatalf("%s: exit %d, want %d: %s", format, code, exitInterrupted, errOut)
		}
		if format == "text" {
			if !strings.HasPrefix(out, "Interrupted after ") {
				t.Errorf("the text does not open with the interruption:\n%.300s", out)
			}
			continue
		}
		var rep struct {
			Interrupted      bool            `json:"interrupted"`
			PlannedDurationS float64         `json:"planned_duration_s"`
			Requests         result.Requests `json:"requests"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if !rep.Interrupted || rep.PlannedDurationS != 3600 || rep.Requests.OK == 0 {
			t.Errorf("report %+v, want interrupted over 3600 s planned, with answers", rep)
		}
	}
}
