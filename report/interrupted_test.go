package report

import (
	"bytes"
	"strings"
	"testing"
)

// A run stopped early says so first, in the text and on the page, with the time it
// covered of the time planned and which clock that is; a run that ended does not.
func TestInterruptedRunSaysSoFirst(t *testing.T) {
	for _, tc := range []struct {
		name        string
		engine      string
		interrupted bool
		want        string
	}{
		{"simulated", "simulate", true, "Interrupted after 12.34s of the 1h planned (simulated time): every figure, rates included, covers the 12.34s that ran."},
		{"emulated", "emulate", true, "Interrupted after 12.34s of the 1h planned (real time)"},
		{"ended", "simulate", false, ""},
	} {
		r := simRun()
		r.Engine, r.Interrupted = tc.engine, tc.interrupted
		if tc.interrupted {
			r.DurationS, r.PlannedDurationS = 12.34, 3600
		}
		var text, page bytes.Buffer
		if err := Text(&text, r); err != nil {
			t.Fatal(err)
		}
		if err := HTML(&page, r, HTMLOptions{}); err != nil {
			t.Fatal(err)
		}
		flat := strings.Join(strings.Fields(text.String()), " ")
		if tc.want == "" {
			if strings.Contains(flat, "Interrupted") || strings.Contains(page.String(), "interrupted after") {
				t.Errorf("%s: a run that ended is said to be interrupted", tc.name)
			}
			continue
		}
		if !strings.HasPrefix(flat, tc.want) {
			t.Errorf("%s: the text opens with\n%.200s\nwant %q", tc.name, flat, tc.want)
		}
		if !strings.Contains(page.String(), "interrupted after 12.34s of 1h") {
			t.Errorf("%s: the page's run line does not say it was interrupted", tc.name)
		}
	}
}

// An interrupted sweep says, above its table, how many points it shows of those
// planned, and that --find went unanswered when it did.
func TestInterruptedSweepSaysSo(t *testing.T) {
	for _, tc := range []struct {
		name        string
		interrupted bool
		find        bool
		want        string
	}{
		{"interrupted", true, false, "Interrupted: incomplete, 3 of the 8 points finished on every seed and are shown; the others are left out; --find is not answered over an incomplete grid."},
		{"ended", false, true, ""},
	} {
		sw := sweepFixture()
		if !tc.find {
			sw.Find = nil
		}
		sw.Interrupted = tc.interrupted
		if tc.interrupted {
			sw.Points, sw.PlannedPoints = sw.Points[:3], 8
		}
		var b bytes.Buffer
		if err := SweepText(&b, sw); err != nil {
			t.Fatal(err)
		}
		flat := strings.Join(strings.Fields(b.String()), " ")
		if tc.want == "" && strings.Contains(flat, "Interrupted") {
			t.Errorf("%s: a sweep that ended is said to be interrupted", tc.name)
		}
		if tc.want != "" && !strings.HasPrefix(flat, tc.want) {
			t.Errorf("%s: the table opens with\n%.200s\nwant %q", tc.name, flat, tc.want)
		}
	}
}
