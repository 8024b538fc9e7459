package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"trafficlab/result"
)

var (
	compareTmpl   = template.Must(template.ParseFS(assets, "assets/compare.html", "assets/frame.html"))
	compareStyle  = style + template.CSS("\n"+asset("compare.css"))
	compareScript = template.JS(asset("compare.js"))
)

// comparePage is what assets/compare.html renders; names and everything from the
// results are escaped by html/template.
type comparePage struct {
	Title string
	Run   string
	Heads []string // the columns' names
	Runs  []string // what each column ran
	// Origins are the file and overrides of each run, as the text's head has them.
	Origins []compareHTMLRow
	Rows    []compareHTMLRow
	Footer  string // the text table's notes and thresholds, under it
	Data    overlay
	Style   template.CSS
	Shared  template.JS // page.js, for its helpers
	Script  template.JS
	UPlot   template.JS
}

type compareHTMLRow struct {
	Label string
	Sub   bool // an error kind under the errors row, indented as in the text
	Cells []compareHTMLCell
}

type compareHTMLCell struct {
	Text   string
	Marked bool // a change beyond the row's threshold: the text's '*'
	// Verdict is the text's better or worse after the mark: the cell is drawn
	// green or red; "" when the row has no direction.
	Verdict string
}

// CompareHTML writes the comparison of rs as one self-contained HTML page to w: the
// table Compare prints, then the runs' charts overlaid, one colour per column
// (throughput, errors, latency p99 and p50 over time since each run's start, the
// latency spectrum, and each service's pod shares by rank). names label the
// columns, as for Compare.
func CompareHTML(w io.Writer, names []string, rs []*result.Result) error {
	var text strings.Builder
	if err := Compare(&text, names, rs); err != nil {
		return err
	}
	p := comparePage{
		Style:  compareStyle,
		Shared: script,
		Script: compareScript,
		UPlot:  uplot,
	}
	for i, r := range rs {
		p.Heads = append(p.Heads, columnName(names, i))
		p.Runs = append(p.Runs, run(r)+interruptedRun(r))
	}
	for _, o := range originRows(rs) {
		p.Origins = append(p.Origins, compareHTMLRow{Label: o.label})
		for _, c := range o.cells {
			p.Origins[len(p.Origins)-1].Cells = append(p.Origins[len(p.Origins)-1].Cells, compareHTMLCell{Text: c})
		}
	}
	p.Title = "trafficlab: " + strings.Join(p.Heads, " vs ")
	p.Run = fmt.Sprintf("%d results of %s, compared against the first", len(rs),
		strings.Join(distinct(rs, scenarioName), ", "))
	for _, m := range compareRows(rs) {
		row := compareHTMLRow{Label: strings.TrimSpace(m.label), Sub: strings.HasPrefix(m.label, " ")}
		for _, c := range compareCells(m, rs) {
			row.Cells = append(row.Cells, compareHTMLCell{Text: c.String(), Marked: c.marked, Verdict: c.verdict})
		}
		p.Rows = append(p.Rows, row)
	}
	// Under the text's table, after its first blank line, come the notes and the
	// thresholds: the page shows them as written there, so they are worded once.
	if _, after, ok := strings.Cut(text.String(), "\n\n"); ok {
		p.Footer = strings.TrimRight(after, "\n")
	}
	p.Data = overlayData(p.Heads, rs)
	// Rendered whole before writing, so a failure leaves no half page behind.
	var b bytes.Buffer
	if err := compareTmpl.Execute(&b, p); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}
