package resultfile

import (
	"bytes"
	"errors"
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

// FuzzResult reads Results written with -o json: the testdata runs of simulate and
// load, and inputs refused by TestReadNamesFileAndField.
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
