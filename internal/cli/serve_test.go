package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"trafficlab/emulate/serve"
)

// serveBuffer is a bytes.Buffer the command's goroutines may write while the test
// reads it.
type serveBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *serveBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *serveBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// runServe runs `trafficlab serve args...` as Main does, until ctx ends.
func runServe(ctx context.Context, stdout, stderr io.Writer, args ...string) int {
	return run(ctx, append([]string{"serve"}, args...), stdout, stderr)
}

const servePod = "{serviceTime: {distribution: constant, value: 1ms}, responseBytes: 300}"

const serveScenario = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: serve}
spec:
  duration: 10s
  seed: 42
  services:
  - name: web
    replicas: 2
    pod:
      serviceTime: {distribution: constant, value: 1ms}
  - name: api
    replicas: 1
    pod:
      serviceTime: {distribution: exponential, mean: 2ms}
      concurrency: 2
  clients:
  - {name: c, target: web, threads: 1}
`

func serveFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every mistake exits 2 with a message that says what to do; nothing listens.
func TestServeBadInput(t *testing.T) {
	file := serveFile(t, serveScenario)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "either --pod-spec YAML or --scenario FILE"},
		{[]string{"--pod-spec", servePod, "--scenario", file}, "either --pod-spec"},
		{[]string{"--pod-spec", "serviceTime: {distribution: normal, mean: 1ms}"}, `--pod-spec:1:29: serviceTime.distribution: unknown distribution "normal"`},
		{[]string{"--pod-spec", "concurrency: 2"}, "--pod-spec:1:1: serviceTime: is required"},
		{[]string{"--pod-spec", "serviceTime: {distribution: constant, value: 1ms}\nconcurency: 2"}, `--pod-spec:2:1: unknown field "concurency"`},
		{[]string{"--pod-spec", servePod, "--service", "web"}, "--service names the pod's service with --scenario or --pod-json"},
		{[]string{"--pod-spec", servePod, "--set", "spec.seed=2"}, "--set needs --scenario"},
		{[]string{"--pod-spec", servePod, "--work", "spin"}, `--work "spin": want burn or sleep`},
		{[]string{"--pod-spec", servePod, "--listen", "8080"}, `--listen "8080": want HOST:PORT`},
		{[]string{"--pod-spec", servePod, "--listen", ":eighty"}, `--listen ":eighty"`},
		{[]string{"--pod-spec", servePod, "--ready-after", "-1s"}, "must not be negative"},
		{[]string{"--pod-spec", servePod, "--ready-after", "soon"}, `invalid argument "soon"`},
		{[]string{"--pod-spec", servePod, "--name", "a\nb"}, "control characters"},
		{[]string{"--pod-spec", servePod, "--bogus"}, "unknown flag: --bogus"},
		{[]string{"--pod-spec", servePod, "extra"}, `unknown command "extra"`},
		{[]string{"--scenario", filepath.Join(t.TempDir(), "missing.yaml")}, "no such file"},
		{[]string{"--scenario", file}, "has 2 services (web, api): choose one with --service"},
		{[]string{"--scenario", file, "--service", "db"}, `no service "db"; it has web, api`},
		{[]string{"--scenario", file, "--service", "web", "--set", "spec.services[0].pod.concurrency=-1"}, "must not be negative"},
		{[]string{"--pod-json", `{"Concurrency": 2}`, "--scenario", file}, "--pod-json goes alone"},
		{[]string{"--pod-json", `{"Concurrency": 2}`}, "--pod-json needs --name"},
		{[]string{"--pod-json", `{"Concurrency": "two"}`, "--name", "web-0"}, "--pod-json: json: cannot unmarshal"},
		{[]string{"--pod-json", `{"Concurrency": 2}`, "--name", "web-0", "--work", "spin"}, `--work "spin"`},
		{[]string{"--pod-spec", servePod, "--call", "db"}, `--call "db": want SERVICE=URL`},
		{[]string{"--pod-spec", servePod, "--call", "db=127.0.0.1:80"}, `127.0.0.1:80 is not an http:// URL`},
	} {
		var out, errb serveBuffer
		code := runServe(context.Background(), &out, &errb, tc.args...)
		if code != exitBadInput || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("serve %q: exit %d, stderr:\n%s\nwant exit 2 and %q", tc.args, code, errb.String(), tc.want)
		}
		if strings.Contains(errb.String(), "listening") {
			t.Errorf("serve %q listened", tc.args)
		}
	}
}

// The help teaches what the command does and how to run it.
func TestServeHelp(t *testing.T) {
	var out, errb serveBuffer
	if code := runServe(context.Background(), &out, &errb, "--help"); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"h2c", "X-Trafficlab-Pod", "/healthz/ready", "SIGTERM", "drain", "Connection: close",
		"CFS quota", "--pod-spec", "--scenario", "--work", "Examples:", "curl"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

var listening = regexp.MustCompile(`serve: pod (\S+) listening on (\S+) `)

// serve runs until SIGTERM (here its context ending) and exits 0; the pod name comes
// from --name, or from the service with --scenario.
func TestServeRuns(t *testing.T) {
	file := serveFile(t, serveScenario)
	for _, tc := range []struct {
		args []string
		name string
	}{
		{[]string{"--pod-spec", servePod, "--name", "web-7", "--work", "sleep"}, "web-7"},
		{[]string{"--scenario", file, "--service", "api", "--set", "spec.services[1].pod.onSigterm.action=drain"}, "api-0"},
		{[]string{"--scenario", "../../examples/r1-curl-loop.yaml", "--name", "webapp1-2"}, "webapp1-2"}, // from the help
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out, errb serveBuffer
			code := make(chan int, 1)
			go func() {
				code <- runServe(ctx, &out, &errb, append(tc.args, "--listen", "127.0.0.1:0")...)
			}()
			var m []string
			for deadline := time.Now().Add(5 * time.Second); m == nil; time.Sleep(time.Millisecond) {
				if m = listening.FindStringSubmatch(errb.String()); m == nil && time.Now().After(deadline) {
					cancel()
					t.Fatalf("not listening after 5s; stderr:\n%s", errb.String())
				}
			}
			if m[1] != tc.name {
				t.Errorf("pod %s, want %s", m[1], tc.name)
			}
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("http://" + m[2] + "/")
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			tr.CloseIdleConnections()
			if resp.StatusCode != 200 || resp.Header.Get(serve.PodHeader) != tc.name {
				t.Errorf("answer %s from %q, want 200 from %s", resp.Status, resp.Header.Get(serve.PodHeader), tc.name)
			}
			cancel()
			select {
			case c := <-code:
				if c != exitOK {
					t.Errorf("exit %d after SIGTERM, want 0; stderr:\n%s", c, errb.String())
				}
			case <-time.After(5 * time.Second):
				t.Fatal("still running 5s after SIGTERM")
			}
			if lines := strings.Count(errb.String(), "\n"); lines != 1 || out.String() != "" {
				t.Errorf("stderr %q and stdout %q: want one line on stderr, nothing on stdout", errb.String(), out.String())
			}
		})
	}
}
