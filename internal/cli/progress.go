package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"trafficlab/sim"
)

// progress draws a one-line bar on stderr, only when stderr is a terminal and the run
// has lasted over a second: pipes and CI logs stay clean.
type progress struct {
	w       io.Writer
	on      bool
	started time.Time
	drawn   bool
}

func newProgress(w io.Writer, quiet bool) *progress {
	f, ok := w.(*os.File)
	return &progress{w: w, on: !quiet && ok && term.IsTerminal(int(f.Fd())), started: time.Now()}
}

func (p *progress) update(now, end sim.Time) {
	if !p.on {
		return
	}
	elapsed := time.Since(p.started)
	if elapsed < time.Second {
		return
	}
	frac := float64(now) / float64(end)
	eta := time.Duration(float64(elapsed) * (1 - frac) / frac)
	const width = 30
	fill := int(frac * width)
	fmt.Fprintf(p.w, "\r%s%s %5.1f%%  %s of %s simulated  ETA %s ",
		strings.Repeat("█", fill), strings.Repeat("░", width-fill), 100*frac,
		time.Duration(now).Round(time.Second), time.Duration(end).Round(time.Second), eta.Round(time.Second))
	p.drawn = true
}

func (p *progress) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
