package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// progress draws a one-line bar on stderr, only when stderr is a terminal and the run
// has lasted over a second: pipes and CI logs stay clean. Sweeps update it from
// several goroutines.
type progress struct {
	w       io.Writer
	on      bool
	clock   func() time.Time
	started time.Time

	mu    sync.Mutex
	drawn time.Time // when the bar was last drawn; zero until it is
}

// redraw is how often the bar may change: often enough to look alive, rarely enough
// that drawing costs nothing next to simulating.
const redraw = 100 * time.Millisecond

func newProgress(w io.Writer, quiet bool) *progress {
	f, ok := w.(*os.File)
	return &progress{w: w, on: !quiet && ok && term.IsTerminal(int(f.Fd())), clock: time.Now, started: time.Now()}
}

// update draws how far the work is: done of total simulated time, the requests
// simulated so far (negative: not counted, as in a real run), and what (when not
// empty) says more, such as "3/20 runs".
func (p *progress) update(done, total time.Duration, requests int64, what string) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock()
	elapsed := now.Sub(p.started)
	if elapsed < time.Second || now.Sub(p.drawn) < redraw || done <= 0 {
		return
	}
	frac := min(float64(done)/float64(total), 1)
	eta := time.Duration(float64(elapsed) * (1 - frac) / frac)
	if what == "" {
		what = fmt.Sprintf("%s of %s simulated", done.Round(time.Second), total.Round(time.Second))
	}
	const width = 30
	fill := int(frac * width)
	rate := ""
	if requests >= 0 {
		rate = "  " + perWallSecond(requests, elapsed) + " simulated req/s"
	}
	fmt.Fprintf(p.w, "\r%s%s %5.1f%%  %s%s  ETA %s \033[K",
		strings.Repeat("█", fill), strings.Repeat("░", width-fill), 100*frac, what,
		rate, eta.Round(time.Second))
	p.drawn = now
}

// perWallSecond writes a rate for the bar: 850, 42.3k, 2.31M.
// count writes n and the noun, plural unless n is 1: "1 run", "2 runs".
func count[N int | int64](n N, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func perWallSecond(n int64, elapsed time.Duration) string {
	r := float64(n) / elapsed.Seconds()
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.2fM", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.1fk", r/1e3)
	}
	return fmt.Sprintf("%.0f", r)
}

func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.drawn.IsZero() {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// log is a writer for lines said while the bar may be drawn: each write clears
// the bar's line first, and the next update draws it again below.
func (p *progress) log() io.Writer { return progressLog{p} }

type progressLog struct{ p *progress }

func (l progressLog) Write(b []byte) (int, error) {
	l.p.mu.Lock()
	defer l.p.mu.Unlock()
	if !l.p.drawn.IsZero() {
		fmt.Fprint(l.p.w, "\r\033[K")
	}
	return l.p.w.Write(b)
}
