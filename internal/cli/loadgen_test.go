package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"trafficlab/emulate/load"
	"trafficlab/result"
	"trafficlab/scenario"
)

// runLoadCLI runs `trafficlab load ARGS` as Main does.
func runLoadCLI(args ...string) (code int, stdout, stderr string) {
	return runCLI(append([]string{"load"}, args...)...)
}

type podCtxKey struct{}

// podsServer answers as two pods, one per connection in turn.
func podsServer(t *testing.T) *httptest.Server {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(load.PodHeader, r.Context().Value(podCtxKey{}).(string))
		_, _ = w.Write([]byte("ok"))
	}))
	srv.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, podCtxKey{}, fmt.Sprintf("web-%d", (conns.Add(1)-1)%2))
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func TestLoadHelpTeaches(t *testing.T) {
	code, out, _ := runLoadCLI("--help")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--threads", "--rate", "intended start", "coordinated omission", "X-Trafficlab-Pod",
		"connection_reset", "trafficlab libraries", "--scenario", "Examples:"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func TestLoadBadInput(t *testing.T) {
	scn := writeTemp(t, "s.yaml", good)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--threads", "2"}, "--target is required"},
		{[]string{"--target", "http://127.0.0.1:1/"}, "give --threads N"},
		{[]string{"--target", "http://127.0.0.1:1/", "--threads", "2", "--rate", "10/s"}, "not both"},
		{[]string{"--target", "http://127.0.0.1:1/", "--rate", "1000"}, "rates need a unit"},
		{[]string{"--target", "http://127.0.0.1:1/", "--threads", "2", "--reuse", "sometimes"}, "reuse"},
		{[]string{"--target", "https://127.0.0.1:1/", "--threads", "2"}, "http://"},
		{[]string{"--target", "http://127.0.0.1:1/", "--threads", "2", "--library", "netscape"}, "unknown library"},
		{[]string{"--target", "http://127.0.0.1:1/", "--threads", "2", "--library", "grpc-go", "--max-lifetime", "1m"}, "not emulated for gRPC channels"},
		{[]string{"--target", "http://127.0.0.1:1/", "--threads", "2", "--client", "x"}, "need --scenario"},
		{[]string{"--target", "http://127.0.0.1:1/", "--threads", "2", "-o", "xml"}, "want text or json"},
		{[]string{"--target", "http://127.0.0.1:1/", "--threads", "2", "--http2", "--http-client", "trafficlab"}, "HTTP/1.1"},
		{[]string{"--target", "http://127.0.0.1:1/", "--threads", "x"}, "invalid argument"},
		{[]string{"--target", "http://127.0.0.1:1/", "--threads", "2", "extra"}, "unknown command"},
		{[]string{"--scenario", scn, "--target", "http://127.0.0.1:1/", "--threads", "3"}, "cannot be used with --scenario"},
		{[]string{"--scenario", scn, "--target", "http://127.0.0.1:1/", "--client", "nobody"}, `no client "nobody"`},
		{[]string{"--scenario", scn, "--target", "http://127.0.0.1:1/", "--set", "spec.clients[0].threads=-1"}, "threads"},
		{[]string{"--scenario", scn, "--target", "http://127.0.0.1:1/", "--client-json", "{}"}, "--client-json goes without --scenario"},
		{[]string{"--target", "http://127.0.0.1:1/", "--client-json", "{"}, "--client-json"},
		{[]string{"--target", "http://127.0.0.1:1/", "--threads", "2", "--name", "x-0"}, "--name goes with --client-json"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := runLoadCLI(tc.args...)
			if code != exitBadInput || !strings.Contains(errOut, tc.want) || out != "" {
				t.Errorf("exit %d, stderr %q, stdout %q; want 2 and %q", code, errOut, out, tc.want)
			}
		})
	}
}

// checkVegetaJSON checks vegeta's report of the load run saved at path: the same
// requests q counts, every one answered "ok" (2 bytes) by podsServer, within the
// run's wall-clock window.
func checkVegetaJSON(t *testing.T, path string, q result.Requests) {
	t.Helper()
	code, vj, errOut := runCLI("report", path, "-o", "vegeta-json")
	if code != exitOK {
		t.Fatalf("report -o vegeta-json: exit %d: %s", code, errOut)
	}
	var v struct {
		Requests    int64                            `json:"requests"`
		StatusCodes map[string]int64                 `json:"status_codes"`
		BytesIn     struct{ Total int64 }            `json:"bytes_in"`
		Success     float64                          `json:"success"`
		Earliest    time.Time                        `json:"earliest"`
		End         time.Time                        `json:"end"`
		Latencies   struct{ Min, Max time.Duration } `json:"latencies"`
	}
	if err := json.Unmarshal([]byte(vj), &v); err != nil {
		t.Fatal(err)
	}
	if v.Requests != q.Total || v.StatusCodes["200"] != q.OK || len(v.StatusCodes) != 1 ||
		v.BytesIn.Total != 2*q.OK || v.Success != 1 || v.Latencies.Min <= 0 || v.Latencies.Max < v.Latencies.Min {
		t.Errorf("vegeta-json %s for requests %+v", vj, q)
	}
	if time.Since(v.Earliest) > time.Minute || v.End.Before(v.Earliest) {
		t.Errorf("vegeta-json window %v to %v is not this run's", v.Earliest, v.End)
	}
}

func TestLoadRuns(t *testing.T) {
	srv := podsServer(t)
	t.Run("json", func(t *testing.T) {
		code, out, errOut := runLoadCLI("--target", srv.URL+"/", "--threads", "2", "--duration", "300ms", "--reuse", "none", "-o", "json", "-q")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		// The Result schema, which report and compare read.
		var r result.Result
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if r.Engine != "load" || r.Requests.OK == 0 || r.Requests.Failed != 0 || len(r.Pods) != 2 || len(r.Clients) != 1 ||
			r.Clients[0].PodsReached != 2 || r.Clients[0].ConnectionsOpened < r.Requests.OK || len(r.Timeline) == 0 {
			t.Errorf("result %+v", r)
		}
		saved := writeTemp(t, "load.json", out)
		sim := writeTemp(t, "sim.json", "")
		code, simOut, errOut := runCLI("simulate", writeTemp(t, "s.yaml", good), "-o", "json", "-q")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if err := os.WriteFile(sim, []byte(simOut), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			args []string
			want string
		}{{[]string{"report", saved}, "web-1"}, {[]string{"compare", sim, saved}, "load.json"}} {
			if code, out, errOut := runCLI(c.args...); code != exitOK || !strings.Contains(out, c.want) {
				t.Errorf("%v: exit %d, want 0 and %q in:\n%s%s", c.args, code, c.want, out, errOut)
			}
		}
		checkVegetaJSON(t, saved, r.Requests)
	})
	t.Run("text", func(t *testing.T) {
		code, out, errOut := runLoadCLI("--target", srv.URL+"/", "--rate", "200/s", "--duration", "300ms", "--library", "go-net-http")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		for _, want := range []string{"Requests", "Latency ms", "Connections", "POD", "web-", "library go-net-http", "max idle 2"} {
			if !strings.Contains(out, want) {
				t.Errorf("report lacks %q:\n%s", want, out)
			}
		}
		if !strings.Contains(errOut, "load: 200/s as go-net-http") {
			t.Errorf("no start line on stderr: %q", errOut)
		}
	})
	t.Run("scenario", func(t *testing.T) {
		code, out, errOut := runLoadCLI("--scenario", writeTemp(t, "s.yaml", good), "--target", srv.URL+"/", "--duration", "300ms", "-o", "json", "-q")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var r result.Result
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if r.Scenario != "cli" || len(r.Clients) != 1 || r.Clients[0].Name != "caller" || r.Clients[0].Threads != 2 ||
			r.Requests.OK == 0 || r.Seed != 0 || r.Pods[0].Service != "web" {
			t.Errorf("result %+v", r)
		}
	})
}

// The text's Errors line names every error kind, as the JSON does, with its count.
func TestLoadTextNamesEveryErrorKind(t *testing.T) {
	r := &load.Report{Errors: result.Errors{Timeout: 1, ConnectionRefused: 2, ConnectionReset: 3, ConnectionClosed: 4, HTTP503: 5}}
	var b strings.Builder
	if err := writeLoadText(&b, r); err != nil {
		t.Fatal(err)
	}
	const want = "timeout 1, connection_refused 2, connection_reset 3, connection_closed 4, http_503 5\n"
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "Errors ") {
			if got := strings.TrimLeft(strings.TrimPrefix(line, "Errors"), " ") + "\n"; got != want {
				t.Errorf("Errors line %q, want %q", got, want)
			}
			return
		}
	}
	t.Errorf("no Errors line in\n%s", b.String())
}

// As emulate's client pod, load waits for its start time on stdin and streams the
// run, its report last, which load.ReadStream reads back; without a start time it
// sends nothing, and stopped while it waits it ends.
func TestLoadStreams(t *testing.T) {
	srv := podsServer(t)
	cfg, err := load.FromClient(&scenario.Client{Name: "c", Threads: 1}, srv.URL+"/", 1500*time.Millisecond, 1)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	start := time.Now().Add(200 * time.Millisecond)
	if err := streamLoad(context.Background(), strings.NewReader(fmt.Sprintf("%d\n", start.UnixNano())), &out, cfg); err != nil {
		t.Fatal(err)
	}
	var intervals int
	rep, err := load.ReadStream(&out, func(int64, *hdr.Histogram) { intervals++ })
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests.OK == 0 || intervals != 2 || rep.Ended.StartUnixNS != start.UnixNano() {
		t.Errorf("%d answered, %d intervals, started at %d; want answers, 2 intervals, the start given (%d)",
			rep.Requests.OK, intervals, rep.Ended.StartUnixNS, start.UnixNano())
	}
	out.Reset()
	if err := streamLoad(context.Background(), strings.NewReader(""), &out, cfg); err == nil || out.Len() != 0 {
		t.Errorf("no start time: error %v, %d bytes streamed; want an error and nothing", err, out.Len())
	}
	// Stopped while it waits (its pod deleted), it ends at once, having sent nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	waiting, _ := io.Pipe()
	err = streamLoad(ctx, waiting, &out, cfg)
	if _, stopped := err.(interrupted); !stopped || out.Len() != 0 {
		t.Errorf("stopped while waiting: error %v, %d bytes streamed; want it interrupted and nothing", err, out.Len())
	}
}

// The text says how far behind its schedule the generator fell only when it did.
func TestLoadTextSaysWhenBehind(t *testing.T) {
	for _, tc := range []struct {
		name string
		rep  load.Report
		want bool
	}{
		{"kept up", load.Report{Sent: 100, Due: 100}, false},
		{"never sent some", load.Report{Sent: 60, Due: 100, Requests: result.Requests{Behind: 40}, MaxLateS: 0.5}, true},
		{"late, every one sent", load.Report{Sent: 100, Due: 100, MaxLateS: 0.002}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := writeLoadText(&b, &tc.rep); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(b.String(), "Schedule"); got != tc.want {
				t.Errorf("schedule line shown %v, want %v:\n%s", got, tc.want, b.String())
			}
			if tc.want && !strings.Contains(b.String(), fmt.Sprintf("%d of %d due sent, %d never sent", tc.rep.Sent, tc.rep.Due, tc.rep.Requests.Behind)) {
				t.Errorf("schedule line lacks the counts:\n%s", b.String())
			}
		})
	}
}
