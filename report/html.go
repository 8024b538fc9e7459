package report

import (
	"bytes"
	"cmp"
	"embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"time"

	"trafficlab/result"
)

//go:embed assets/frame.html assets/page.html assets/page.css assets/page.js assets/compare.html assets/compare.css assets/compare.js assets/uPlot.iife.min.js assets/uPlot.min.css assets/uPlot.LICENSE
var assets embed.FS

var (
	tmpl = template.Must(template.ParseFS(assets, "assets/page.html", "assets/frame.html"))
	// The styles and scripts are our own embedded assets, so html/template may
	// insert them as they are. uPlot's license goes ahead of it, as the MIT license asks.
	style  = template.CSS(asset("uPlot.min.css") + "\n" + asset("page.css"))
	script = template.JS(asset("page.js"))
	uplot  = template.JS("/*! uPlot 1.6.32, https://github.com/leeoniya/uPlot\n\n" + asset("uPlot.LICENSE") + "*/\n" + asset("uPlot.iife.min.js"))
)

func asset(name string) string {
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		panic(err) // the embed directive guarantees it
	}
	return string(b)
}

// HTMLOptions are what the page shows beyond the Result.
type HTMLOptions struct {
	// Scenario is the scenario document as run (after --set), shown collapsed; nil
	// when it is not at hand, as for a result read back from JSON.
	Scenario []byte
	// Title heads the page and names its tab; empty means "trafficlab: SCENARIO".
	Title string
}

// page is what assets/page.html renders. Everything from the Result or the
// scenario is escaped by html/template: names are user input.
type page struct {
	Title string
	Run   string // scenario · engine · seed · duration · kube-proxy mode
	// Origin says what the run was asked to run, as the text's line under its
	// header; empty when the Result did not record it.
	Origin string
	Stats  []stat
	// Explained are the text report's sections that explain, in its order; Quiet
	// says what the run shows when there are none.
	Explained []explained
	Quiet     string
	// Histogram says what the latency histogram counts.
	Histogram string
	Per       string // what one point of a time chart covers, when not one second
	Nodes     []nodeRow
	Graph     *callGraph // nil when no service calls another
	Scenario  string
	// NoScenario says why Scenario is empty.
	NoScenario string
	Text       string
	Data       data
	Style      template.CSS
	Script     template.JS
	UPlot      template.JS
}

// explained is one section that explains: a paragraph of prose, or preformatted
// text with its tables.
type explained struct {
	Text  string
	Prose bool
}

type stat struct {
	Label, Value string
	Bad          bool // errors: drawn in red
}

type nodeRow struct {
	Name, CPU, Used, Disk, Slow string
	Pods                        int
}

// HTML writes one self-contained HTML page for r to w: it loads nothing from the
// network, so it opens offline.
func HTML(w io.Writer, r *result.Result, opts HTMLOptions) error {
	var text strings.Builder
	if err := Text(&text, r); err != nil {
		return err
	}
	p := page{
		Title:      opts.Title,
		Run:        run(r),
		Stats:      stats(r),
		Explained:  sections(r),
		Quiet:      quiet(r),
		Histogram:  histogramCaption(r),
		Nodes:      nodeRows(r),
		Graph:      graphOf(r),
		Scenario:   string(opts.Scenario),
		NoScenario: noScenario(r),
		Text:       text.String(),
		Data:       chartData(r),
		Style:      style,
		Script:     script,
		UPlot:      uplot,
	}
	p.Run += interruptedRun(r)
	p.Origin = originLine(r)
	if p.Title == "" {
		p.Title = "trafficlab: " + cmp.Or(r.Scenario, r.Engine)
	}
	if p.Data.StepS != 1 {
		p.Per = " Each point covers " + GoDuration(p.Data.StepS) + "."
	}
	// Rendered whole before writing, so a failure leaves no half page behind.
	var b bytes.Buffer
	if err := tmpl.Execute(&b, p); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

func run(r *result.Result) string {
	return joinKnown(r.Scenario, r.Engine, seedOf(r), GoDuration(r.DurationS), kubeProxy(r, true))
}

// noScenario says why the page shows no scenario: it was not recorded, or the
// engine ran none.
func noScenario(r *result.Result) string {
	if ranScenario(r) {
		return "The scenario was not recorded with this result."
	}
	return "This " + r.Engine + " run had no scenario: it sent its requests to a target that trafficlab did not describe."
}

// stats are the text report's top lines as tiles.
func stats(r *result.Result) []stat {
	l := r.LatencyMS
	success := 0.0
	if r.Requests.Total > 0 {
		success = float64(r.Requests.OK) / float64(r.Requests.Total)
	}
	errs := failed(r)
	return []stat{
		{Label: "requests", Value: count(r.Requests.Total)},
		{Label: "rate", Value: perSecond(r.RateRPS)},
		{Label: "throughput", Value: perSecond(r.ThroughputRPS)},
		{Label: "p50", Value: successMS(r, l.P50)},
		{Label: "p99", Value: successMS(r, l.P99)},
		{Label: "p99.9", Value: successMS(r, l.P999)},
		{Label: "max", Value: successMS(r, l.Max)},
		{Label: "success", Value: percent(success, 2)},
		{Label: "errors", Value: count(errs), Bad: errs > 0},
	}
}

// sections are the text report's sections that explain and have something to say.
func sections(r *result.Result) []explained {
	var out []explained
	for _, note := range tableNotes(r) {
		out = append(out, explained{Text: note, Prose: true})
	}
	for _, sec := range textSections {
		if !sec.explains {
			continue
		}
		if sec.prose != nil {
			for _, p := range sec.prose(r) {
				out = append(out, explained{Text: p, Prose: true})
			}
			continue
		}
		var b strings.Builder
		sec.write(&b, r)
		if s := strings.Trim(b.String(), "\n"); s != "" {
			out = append(out, explained{Text: s})
		}
	}
	return out
}

// quiet is what the page says of a run none of whose sections explain anything:
// only what the run shows.
func quiet(r *result.Result) string {
	var happened []string
	if n := failed(r); n > 0 {
		happened = append(happened, counted(n, "request")+" failed")
	}
	if r.Slow > 0 {
		happened = append(happened, counted(r.Slow, "request")+" were slow")
	}
	if len(happened) > 0 {
		return "No section of the text report explains this run, although " + strings.Join(happened, " and ") + "."
	}
	return "Nothing to explain: the load was spread evenly, and no request failed or was slow."
}

// histogramCaption says what the histogram counts: the scenario's buckets count
// every request, failures at their time to failure; buckets derived from the
// latency spectrum count the successful ones.
func histogramCaption(r *result.Result) string {
	if len(r.Histogram) > 0 {
		return "How many requests took how long, in the scenario's buckets: " + histogramCounts(r) + "."
	}
	s := "How many successful requests took how long"
	if n := failed(r); n > 0 {
		s += fmt.Sprintf(" (the %s are not counted)", counted(n, "failed request"))
	}
	return s + "."
}

func nodeRows(r *result.Result) []nodeRow {
	if len(r.Nodes) < 2 {
		return nil
	}
	var out []nodeRow
	for _, n := range r.Nodes {
		row := nodeRow{Name: n.Name, CPU: "unlimited", Used: pct(n.CPUUtilization), Disk: "–", Slow: "–", Pods: n.Pods}
		if n.CPU > 0 {
			row.CPU = fmt.Sprintf("%g cores", n.CPU)
		}
		if n.DiskUtilization > 0 {
			row.Disk = pct(n.DiskUtilization)
		}
		if n.Slow > 0 {
			row.Slow = fmt.Sprintf("%s (%s)", pct(n.SlowShare), count(n.Slow))
		}
		out = append(out, row)
	}
	return out
}

// GoDuration writes a span as Go writes durations, without zero tails: 90s is 1m30s,
// 120s is 2m. A span of a second or more is rounded to the millisecond; a shorter one
// to the microsecond, or the nanosecond under a millisecond, so that no run reads
// as 0s (a 300µs run is 300µs).
func GoDuration(s float64) string {
	unit := time.Millisecond
	switch {
	case s < 1e-3:
		unit = time.Nanosecond
	case s < 1:
		unit = time.Microsecond
	}
	d := time.Duration(math.Round(s*float64(time.Second/unit))) * unit
	out := d.String()
	if strings.HasSuffix(out, "m0s") {
		out = strings.TrimSuffix(out, "0s")
	}
	if strings.HasSuffix(out, "h0m") {
		out = strings.TrimSuffix(out, "0m")
	}
	return out
}

// perSecond writes a rate to a tenth, with thousands separators: 4,612.3/s.
func perSecond(v float64) string {
	tenths := int64(math.Round(v * 10))
	return fmt.Sprintf("%s.%d/s", count(tenths/10), tenths%10)
}
