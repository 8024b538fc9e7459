package cli

import (
	"strings"
	"testing"
	"time"
)

func TestProgressBar(t *testing.T) {
	var b strings.Builder
	t0 := time.Unix(0, 0)
	now := t0
	p := &progress{w: &b, on: true, clock: func() time.Time { return now }, started: t0}

	now = t0.Add(500 * time.Millisecond)
	p.update(time.Minute, time.Hour, 1000, "")
	if b.Len() != 0 {
		t.Fatalf("drew within the first second: %q", b.String())
	}
	// 2 s of wall time, a quarter done: 6 s to go; 2 M requests in 2 s.
	now = t0.Add(2 * time.Second)
	p.update(15*time.Minute, time.Hour, 2_000_000, "")
	for _, want := range []string{"25.0%", "15m0s of 1h0m0s simulated", "1.00M simulated req/s", "ETA 6s"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("bar %q lacks %q", b.String(), want)
		}
	}
	drawn := b.Len()
	now = now.Add(redraw / 2)
	p.update(16*time.Minute, time.Hour, 2_100_000, "3/20 runs")
	if b.Len() != drawn {
		t.Error("redrew sooner than every", redraw)
	}
	now = now.Add(redraw)
	p.update(16*time.Minute, time.Hour, 2_100_000, "3/20 runs")
	if !strings.Contains(b.String()[drawn:], "3/20 runs") {
		t.Errorf("sweep bar %q lacks its runs", b.String()[drawn:])
	}
	p.done()
	if !strings.HasSuffix(b.String(), "\r\033[K") {
		t.Error("done() left the bar on the line")
	}

	var quiet strings.Builder
	q := newProgress(&quiet, false) // not a terminal
	q.started = t0
	q.update(time.Minute, time.Hour, 1, "")
	q.done()
	if quiet.Len() != 0 {
		t.Errorf("drew on a non-terminal: %q", quiet.String())
	}
}
