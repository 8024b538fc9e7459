package report_test

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"trafficlab/examples"
	"trafficlab/report"
)

// tables are the text report's sections the page draws as charts and tiles instead
// of repeating them under "What happened", by their first line.
var tables = []string{
	"simulate · ", // the run
	"Requests ",   // the totals
	"Service ",    // the pods of each service
	"Clients\n",   // the clients' connections
	"Scale events: ",
	"Latency histogram: ",
}

// Every explanation the text report gives reaches the page: each section of the
// text of every example, but the ones the page draws, is in the page's "What
// happened" panel. The examples run for their first seconds (long enough to
// have something to say: throttling, timeouts, uneven spreads, slow requests).
func TestPageExplainsWhatTheTextExplains(t *testing.T) {
	for _, ex := range examples.List() {
		t.Run(ex.Name, func(t *testing.T) {
			r, _ := simulated(t, ex.Name, "5s")
			var text, page bytes.Buffer
			if err := report.Text(&text, r); err != nil {
				t.Fatal(err)
			}
			if err := report.HTML(&page, r, report.HTMLOptions{}); err != nil {
				t.Fatal(err)
			}
			_, rest, _ := strings.Cut(page.String(), `id="explanation"`)
			panel, _, _ := strings.Cut(rest, "</section>")
			panel = strings.Join(strings.Fields(html.UnescapeString(panel)), " ")
			for _, sec := range strings.Split(text.String(), "\n\n") {
				if !isTable(sec) {
					if !strings.Contains(panel, strings.Join(strings.Fields(sec), " ")) {
						t.Errorf("the page lacks the text report's section:\n%s", sec)
					}
					continue
				}
				// A table's rows are padded into columns; the sentences under it are
				// not, and must be on the page too, but for the label of the pods
				// table's CPU column, which the page's chart does not have.
				lines := strings.Split(sec, "\n")
				for _, l := range lines[1:] {
					if strings.Contains(l, "  ") || strings.HasPrefix(l, "CPU: ") || strings.TrimSpace(l) == "" {
						continue
					}
					if !strings.Contains(panel, strings.Join(strings.Fields(l), " ")) {
						t.Errorf("the page lacks the text report's line under a table:\n%s", l)
					}
				}
			}
		})
	}
}

func isTable(sec string) bool {
	for _, p := range tables {
		if strings.HasPrefix(sec, p) {
			return true
		}
	}
	return false
}
