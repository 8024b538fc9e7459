package load

import (
	"testing"
	"time"

	"trafficlab/model/library"
)

// TestIdlePick: the trafficlab pool reuses the most recently returned connection,
// or with IdlePick fifo the longest idle, or with created the first opened, and
// closes expired ones on the way, as model/client.Pool does.
func TestIdlePick(t *testing.T) {
	now := time.Now()
	tr := newTracker(nil)
	mk := func(born, used time.Duration) *h1conn {
		return &h1conn{tc: &conn{t: tr, born: now.Add(-born)}, lastUsed: now.Add(-used)}
	}
	for _, tc := range []struct {
		name string
		pick string
		// idle connections, oldest release first: their age and idle time
		idle             []*h1conn
		idleTO, lifetime time.Duration
		want             int // index of the connection taken; -1 dial
	}{
		{"lifo takes the last returned", library.PickLIFO, []*h1conn{mk(5, 3), mk(5, 2), mk(5, 1)}, 0, 0, 2},
		{"fifo takes the longest idle", library.PickFIFO, []*h1conn{mk(5, 3), mk(5, 2), mk(5, 1)}, 0, 0, 0},
		{"created takes the first opened", library.PickCreated, []*h1conn{mk(5, 3), mk(9, 2), mk(7, 1)}, 0, 0, 1},
		{"idle timeout skips the idle ones", library.PickFIFO, []*h1conn{mk(5*time.Second, 3*time.Second), mk(5, 1)}, time.Second, 0, 1},
		{"lifetime skips the old ones", library.PickLIFO, []*h1conn{mk(time.Hour, 2), mk(2*time.Hour, 1)}, 0, time.Minute, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &h1pool{r: &runner{tracker: tr}, pick: tc.pick, idleTO: tc.idleTO, lifetime: tc.lifetime}
			p.idle = append(p.idle, tc.idle...)
			p.open = len(tc.idle)
			c, dial := p.takeLocked(now)
			switch {
			case tc.want < 0 && (c != nil || !dial):
				t.Errorf("took %v, want a dial", c)
			case tc.want >= 0 && c != tc.idle[tc.want]:
				t.Errorf("took %v, want idle[%d]", c, tc.want)
			}
		})
	}
}
