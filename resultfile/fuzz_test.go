package resultfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"trafficlab/report"
	"trafficlab/result"
)

// readAndRender is what report and compare do with a file: read it, and render
// what was read in every format, the HTML page and a comparison too. Whatever the bytes, reading either refuses them
// with an *Error naming the file, or gives a Result that passes Check and that
// every renderer takes without panicking.
func readAndRender(t *testing.T, data []byte) {
	r, err := Decode("fuzz", bytes.NewReader(data))
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || e.File != "fuzz" || !strings.HasPrefix(err.Error(), "fuzz: ") {
			t.Fatalf("refused without the file named: %v", err)
		}
		return
	}
	if err := Check(r); err != nil {
		t.Fatalf("read a Result its check refuses: %v", err)
	}
	for name, render := range map[string]func(io.Writer, *result.Result) error{
		"text": report.Text, "json": report.JSON, "vegeta-json": report.VegetaJSON,
		"vegeta-hist": report.VegetaHist, "prometheus": report.Prometheus,
	} {
		err := render(io.Discard, r)
		if err != nil && !errors.Is(err, report.ErrNoHistogram) && !errors.Is(err, report.ErrNotEveryRequest) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := report.HTML(io.Discard, r, report.HTMLOptions{}); err != nil {
		t.Errorf("html: %v", err)
	}
	if err := report.Compare(io.Discard, []string{"a", "b"}, []*result.Result{r, r}); err != nil {
		t.Errorf("compare: %v", err)
	}
	if err := report.CompareHTML(io.Discard, []string{"a", "b"}, []*result.Result{r, r}); err != nil {
		t.Errorf("compare --html: %v", err)
	}
}

// hostile are Results no run writes, each number at an extreme: too large for a
// renderer's arithmetic (a latency of 1e308 ms made the HTML page's histogram
// index an empty slice), negative, or where no engine puts it.
var hostile = []string{
	`{"engine":"simulate","duration_s":1e308,"requests":{"total":1,"ok":1},"latency_ms":{"min":1,"mean":1,"p50":1,"p90":1,"p95":1,"p99":1,"p999":1,"max":1e308},"throughput_rps":1e308}`,
	`{"engine":"simulate","duration_s":10,"timeline_interval_s":1e-300,"requests":{"total":1,"ok":1},"timeline":[{"t_s":0,"requests":1},{"t_s":1e300,"requests":0}]}`,
	`{"engine":"simulate","duration_s":10,"requests":{"total":2,"ok":2},"pods":[{"name":"a","service":"s","requests":9223372036854775807},{"name":"b","service":"s","requests":9223372036854775807}]}`,
	`{"engine":"simulate","duration_s":10,"requests":{"total":9223372036854775807,"ok":9223372036854775807},"slow":9223372036854775807}`,
	`{"engine":"simulate","duration_s":0,"requests":{"total":0,"ok":0}}`,
	`{"engine":"simulate","duration_s":10,"requests":{"total":1,"ok":1},"histogram":[{"from_ms":0,"to_ms":1,"count":1,"share":1},{"from_ms":1e308,"to_ms":null,"count":9223372036854775807,"share":1}]}`,
	`{"engine":"simulate","duration_s":10,"requests":{"total":1,"ok":1},"samples":[{"t_s":-5,"latency_ms":-3},{"t_s":1e308,"latency_ms":1e308}]}`,
	`{"engine":"simulate","duration_s":10,"requests":{"total":1,"ok":1},"latency_spectrum":[{"percentile":100,"ms":1e308,"count":1}]}`,
	`{"engine":"simulate","duration_s":10,"requests":{"total":1,"ok":1},"clients":[{"name":"c","target":"x","replicas":-5,"threads":-1,"runs":[{"phase":-1,"start_s":5,"end_s":-5}]}]}`,
	`{"engine":"simulate","duration_s":10,"requests":{"total":1,"ok":1},"scale_events":[{"t_s":-1,"service":"s","from":-5,"to":1000000000}],"rollouts":[{"service":"s","start_s":-1,"done_s":-5}]}`,
	`{"engine":"simulate","duration_s":10,"requests":{"total":1,"ok":1},"nodes":[{"name":"n","cpu":-1,"cpu_utilization":1e308,"pods":-3}],"suspects":[{"node":"n","resource":"x","share_of_tail":1e308,"slow_requests":-1}]}`,
	`{"engine":"simulate","duration_s":10,"requests":{"total":1,"ok":1},"timeline":[{"t_s":0,"requests":1,"replicas":{"s":-1000000000},"pod_requests":{"p":-5}}],"timeline_interval_s":1}`,
	`{"engine":"simulate","duration_s":10,"requests":{"total":1,"ok":1},"tcp":{"segments":-1,"worst_connections":[{"client":"c","pod":"p","opened_s":-1,"closed_s":-5,"retransmits":-1}]}}`,
	`{"engine":"simulate","duration_s":10,"requests":{"total":1,"ok":1},"sidecars":[{"pod":"p","direction":"x","workers":-1,"worker_utilization":1e308}]}`,
	`{"engine":"simulate","duration_s":10,"requests":{"total":1,"ok":1},"pending":[{"name":"p","service":"s","since_s":-1}],"background":[{"name":"b","node":"n","cpu_cores":-1,"disk_written_bytes":-1}]}`,
	`{"engine":"simulate","duration_s":0,"timeline_interval_s":0,"requests":{"total":5,"ok":5},"timeline":[{"t_s":0,"requests":5,"p50_ms":1,"p90_ms":1,"p99_ms":1,"p999_ms":1,"pod_requests":{"a":5}}],"pods":[{"name":"a","service":"s","requests":5}]}`,
	`{"engine":"emulate","duration_s":10,"requests":{"total":5,"ok":5},"latency_spectrum":[{"percentile":0,"ms":0.000001,"count":1},{"percentile":100,"ms":3600000,"count":5}]}`,
	`{"engine":"simulate","duration_s":10,"requests":{"total":5,"ok":5},"histogram":[{"from_ms":0,"to_ms":0.0000001,"count":5,"share":1}]}`,
	`{"engine":"simulate","duration_s":10,"requests":{"total":5,"ok":0,"failed":5},"errors":{"timeout":5},"ended":{"latency_ms":{"min":3600000,"mean":3600000,"p50":3600000,"p90":3600000,"p95":3600000,"p99":3600000,"p999":3600000,"max":3600000},"latency_sum_ns":9223372036854775807,"latency_min_ns":0,"latency_max_ns":9223372036854775807,"last_sent_ns":9223372036854775807,"last_end_ns":9223372036854775807,"status_codes":{"0":5},"errors":[{"kind":"timeout"}]}}`,
	`{"engine":"vegeta","duration_s":10,"requests":{"total":5,"ok":5},"ended":{"first_sent_ns":0,"last_sent_ns":0,"last_end_ns":0,"start_unix_ns":9223372036854775807,"status_codes":{"200":5}}}`,
	`{"engine":"simulate","duration_s":1e9,"requests":{"total":5,"ok":5},"timeline_interval_s":1e-9,"timeline":[{"t_s":0},{"t_s":1e9}],"scale_events":[{"t_s":5,"service":"s","from":0,"to":2147483647}]}`,
	`{"engine":"simulate","duration_s":10,"requests":{"total":5,"ok":5},"pods":[{"name":"a","service":"s","requests":5,"start_s":1e308,"ready_s":1e308,"deleted_s":0,"end_s":1e308}],"rollouts":[{"service":"s","strategy":"x","start_s":1e308,"done_s":0}]}`,
	`{"engine":"simulate","duration_s":10,"requests":{"total":5,"ok":5},"clients":[{"name":"c","target":"s","replicas":2147483647,"threads":2147483647,"runs":[{"phase":2147483647,"start_s":0,"end_s":1e308,"requests":5}]}]}`,
}

// TestHostileResults: each is refused, or read and rendered in every format.
func TestHostileResults(t *testing.T) {
	for i, h := range hostile {
		t.Run(fmt.Sprint(i), func(t *testing.T) { readAndRender(t, []byte(h)) })
	}
}

// FuzzResult reads Results written with -o json: the testdata runs of simulate and
// load, inputs refused by TestReadNamesFileAndField, and the hostile ones.
func FuzzResult(f *testing.F) {
	for _, name := range runs {
		f.Add([]byte(mustRead(f, name)))
	}
	r1 := mustRead(f, "simulate-r1.json")
	for _, bad := range []string{
		strings.Replace(r1, `"p50": `, `"p50": -`, 1),
		strings.Replace(r1, `"ok": `, `"ok": 1`, 1),
		`{}`, `{"engine": "simulate"}`, `{"engine": "simulate", "points": []}`, `{"latencies": {}}`,
		`{"engine": "vegeta", "requests": {"total": 1, "ok": 1}, "ended": {"status_codes": {"200": 1}}}`,
	} {
		f.Add([]byte(bad))
	}
	for _, h := range hostile {
		f.Add([]byte(h))
	}
	f.Fuzz(readAndRender)
}

// FuzzVegeta reads vegeta's results: an attack in each encoding as vegeta's own
// encoders write it, simulate's --requests CSV, and a negative latency.
func FuzzVegeta(f *testing.F) {
	rs := attack()
	for _, e := range encodings {
		f.Add(encoded(f, e.enc, rs))
		f.Add(encoded(f, e.enc, rs[:1]))
	}
	lines := strings.SplitAfter(mustRead(f, "vegeta-mixed.csv"), "\n")
	f.Add([]byte(strings.Join(lines[:min(len(lines), 40)], "")))
	f.Add([]byte("1767225600000000000,200,-5,0,0,,,a,0,GET,http://web/,\n"))
	f.Fuzz(readAndRender)
}
