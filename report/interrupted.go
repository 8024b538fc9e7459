package report

import (
	"fmt"
	"strings"

	"trafficlab/result"
)

// interrupted is the sentence that opens the report of a run stopped early: what
// its figures cover. Empty for a run that ran its course.
func interrupted(r *result.Result) string {
	if !r.Interrupted {
		return ""
	}
	clock := "simulated"
	if r.Engine != "simulate" {
		clock = "real"
	}
	return fmt.Sprintf("Interrupted after %s of the %s planned (%s time): every figure, rates included, covers the %s that ran.",
		GoDuration(r.DurationS), GoDuration(r.PlannedDurationS), clock, GoDuration(r.DurationS))
}

// writeInterrupted writes interrupted's sentence and a blank line, if any.
func writeInterrupted(b *strings.Builder, r *result.Result) {
	if s := interrupted(r); s != "" {
		fmt.Fprintf(b, "%s\n\n", wrap(s, width))
	}
}

// interruptedRun is what the page's run line adds for a run stopped early.
func interruptedRun(r *result.Result) string {
	if !r.Interrupted {
		return ""
	}
	return fmt.Sprintf(" · interrupted after %s of %s", GoDuration(r.DurationS), GoDuration(r.PlannedDurationS))
}
