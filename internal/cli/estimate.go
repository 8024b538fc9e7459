package cli

import (
	"fmt"
	"io"
	"time"

	"trafficlab/simulate"
)

// longRun is the estimated wall time from which a run is announced before it
// starts, with its estimate, on stderr whatever it is (a pipe or a log too, not only
// a terminal): a user who asked for a year of simulated time learns so at once.
var longRun = 10 * time.Second

// announceLongRun tells, before a long run, how many requests it offers and about
// how long the simulator takes for them on workers cores.
func announceLongRun(w io.Writer, verb string, requests float64, workers int) {
	wall := requests / simulate.RequestsPerWallSecond / float64(max(workers, 1))
	if wall < longRun.Seconds() {
		return
	}
	fmt.Fprintf(w, "%s: about %.3g simulated requests: about %s of wall time at about %.3g M requests per second a core; --duration shortens the run\n",
		verb, requests, roughly(wall), simulate.RequestsPerWallSecond/1e6)
}

// roughly writes a number of seconds in the largest unit that keeps it at least 1.
func roughly(s float64) string {
	for _, u := range []struct {
		name    string
		seconds float64
	}{{"years", 365 * 86400}, {"days", 86400}, {"hours", 3600}, {"minutes", 60}} {
		if s >= u.seconds {
			return fmt.Sprintf("%.3g %s", s/u.seconds, u.name)
		}
	}
	return fmt.Sprintf("%.0f seconds", s)
}
