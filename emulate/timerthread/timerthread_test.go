package timerthread

import (
	"runtime"
	"sync"
	"testing"
)

// Each reservation adds a P and its release takes it back, once, whatever the
// order and however many run at once.
func TestReserveAddsAPUntilReleased(t *testing.T) {
	base := runtime.GOMAXPROCS(0)
	var releases []func()
	for i := 1; i <= 3; i++ {
		releases = append(releases, Reserve())
		if got := runtime.GOMAXPROCS(0); got != base+i {
			t.Fatalf("%d reserved: GOMAXPROCS %d, want %d", i, got, base+i)
		}
	}
	releases[1]()
	releases[1]() // a second call changes nothing
	if got := runtime.GOMAXPROCS(0); got != base+2 {
		t.Fatalf("after one release: GOMAXPROCS %d, want %d", got, base+2)
	}
	var wg sync.WaitGroup
	for _, r := range []func(){releases[0], releases[2], Reserve(), Reserve()} {
		wg.Go(r)
	}
	wg.Wait()
	if got := runtime.GOMAXPROCS(0); got != base {
		t.Fatalf("all released: GOMAXPROCS %d, want %d", got, base)
	}
}
