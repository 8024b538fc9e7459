package background

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trafficlab/emulate/cpuclock"
	"trafficlab/scenario"
)

// A writer in bursts of 500 ms every second, at 1 MiB/s in 256 KiB chunks, for
// 2 s: in each burst a chunk at its start and one 250 ms later, then nothing until
// the next: 4 chunks, 1 MiB, as simulate/background writes them.
func TestWriterFollowsItsSchedule(t *testing.T) {
	rate := resource.MustParse("1Mi")
	chunk := int64(256 << 10)
	spec := &scenario.Background{Name: "batch", DiskWriteBytesPerSecond: &rate, DiskWriteChunkBytes: &chunk,
		Schedule: &scenario.Schedule{Bursts: &scenario.Bursts{Every: metav1.Duration{Duration: time.Second}, Length: metav1.Duration{Duration: 500 * time.Millisecond}}}}
	file := filepath.Join(t.TempDir(), "data")
	rep, err := Run(context.Background(), Config{Spec: spec, File: file, Start: time.Now().Add(50 * time.Millisecond), Duration: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Writes != 4 || rep.DiskWrittenBytes != 1<<20 || st.Size() != 1<<20 {
		t.Errorf("report %+v, file %d bytes: want 4 writes, 1 MiB", rep, st.Size())
	}
}

// A burner of half a core for 1 s uses about 0.5 s of CPU: not more (its duty
// cycle is measured on the wall clock, so what it loses to other processes it does
// not make up), and not much less on a machine with a core to spare.
func TestBurnerUsesItsCores(t *testing.T) {
	half := resource.MustParse("500m")
	before := cpuclock.Process()
	if _, err := Run(context.Background(), Config{Spec: &scenario.Background{Name: "burn", CPU: &half}, Start: time.Now(), Duration: time.Second}); err != nil {
		t.Fatal(err)
	}
	used := cpuclock.Process() - before
	if used < 250*time.Millisecond || used > 600*time.Millisecond {
		t.Errorf("used %v of CPU in 1 s; want about 500ms", used)
	}
}
