package disk

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"trafficlab/emulate/cgroup"
	"trafficlab/emulate/emutest"
)

// Writes to a limited volume take as long as its limits say, whoever writes and
// however: direct writes, and buffered ones once written back (fsync). The limit
// is the block layer's, which lets a group run ahead by at most the rest of a
// throttle slice (100 ms, blk-throttle's throtl_slice on rotational and loop
// devices alike), hence the 10 % below; above, the machine's noise and, for
// buffered writes, ext4's journal and metadata, hence the wider bounds. The same
// write on a volume without limits is far quicker, so the limit is what slows.
func TestLimitsHoldForEveryWriter(t *testing.T) {
	emutest.NeedRoot(t, "losetup", "mkfs.ext4", "mount", "umount")
	const mib = 1 << 20
	for _, tc := range []struct {
		name     string
		lim      Limits
		write    func(t *testing.T, dir string)
		min, max time.Duration
	}{
		{"direct, 4 MiB at 2 MiB/s", Limits{WriteBytesPerSecond: 2 * mib}, func(t *testing.T, dir string) { direct(t, dir, 1, 4*mib) }, 1800 * time.Millisecond, 3 * time.Second},
		{"direct, 200 writes at 100 IOPS", Limits{WriteIOPS: 100}, func(t *testing.T, dir string) { direct(t, dir, 200, 4096) }, 1800 * time.Millisecond, 3 * time.Second},
		{"buffered and synced, 4 MiB at 2 MiB/s", Limits{WriteBytesPerSecond: 2 * mib}, func(t *testing.T, dir string) { buffered(t, dir, 4*mib) }, 1800 * time.Millisecond, 4 * time.Second},
		{"direct, 4 MiB, no limit", Limits{}, func(t *testing.T, dir string) { direct(t, dir, 1, 4*mib) }, 0, 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Create(t.TempDir(), "node-0", 256*mib, tc.lim)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := d.Close(); err != nil {
					t.Error(err)
				}
				if _, err := os.Stat(d.image); !os.IsNotExist(err) {
					t.Errorf("image %s left: %v", d.image, err)
				}
			}()
			before, err := d.Stats()
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			tc.write(t, d.Dir())
			took := time.Since(start)
			after, _ := d.Stats()
			t.Logf("%v; device: %d writes, %d bytes", took, after.Writes-before.Writes, after.Bytes-before.Bytes)
			if took < tc.min || took > tc.max {
				t.Errorf("took %v, want %v to %v", took, tc.min, tc.max)
			}
			if after.Bytes-before.Bytes < 800*1024 {
				t.Errorf("the device wrote %d bytes: want the writes to have reached it", after.Bytes-before.Bytes)
			}
		})
	}
}

// direct writes n blocks of size bytes with O_DIRECT, from a page-aligned buffer.
func direct(t *testing.T, dir string, n, size int) {
	t.Helper()
	if err := writeDirect(dir, n, size); err != nil {
		t.Fatal(err)
	}
}

func writeDirect(dir string, n, size int) error {
	buf, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return err
	}
	defer unix.Munmap(buf)
	f, err := os.OpenFile(filepath.Join(dir, "direct"), os.O_CREATE|os.O_WRONLY|syscall.O_DIRECT, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	for range n {
		if _, err := f.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// buffered writes size bytes through the page cache and waits for them to reach
// the device.
func buffered(t *testing.T, dir string, size int) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "buffered"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// A small write issued behind a large one waits for it, whoever issues it: the
// throttle queues a group's writes in order (blk-throttle dispatches each group's
// bios first in, first out), which is model/disk's FIFO. 4 MiB at 2 MiB/s take
// 2 s; a 4 KiB write 200 ms later finishes with them, 1.8 s later, less a slice.
func TestSmallWriteWaitsBehindALargeOne(t *testing.T) {
	emutest.NeedRoot(t, "losetup", "mkfs.ext4", "mount", "umount")
	d, err := Create(t.TempDir(), "node-0", 64<<20, Limits{WriteBytesPerSecond: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	large := make(chan error)
	go func() { large <- writeDirect(d.Dir(), 1, 4<<20) }()
	time.Sleep(200 * time.Millisecond)
	if err := os.MkdirAll(filepath.Join(d.Dir(), "small"), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	direct(t, filepath.Join(d.Dir(), "small"), 1, 4096)
	waited := time.Since(start)
	if err := <-large; err != nil {
		t.Fatal(err)
	}
	t.Logf("the small write waited %v", waited)
	if waited < 1500*time.Millisecond {
		t.Errorf("the small write took %v: want it behind the large one, about 1.8 s", waited)
	}
}

// What a killed run left, Cleanup removes: the limit, the mount, the loop device
// and the image; a volume of a run still going is left alone.
func TestCleanupRemovesStaleVolumes(t *testing.T) {
	emutest.NeedRoot(t, "losetup", "mkfs.ext4", "mount", "umount")
	parent := t.TempDir()
	stale, err := Create(parent, "gone", 16<<20, Limits{WriteIOPS: 100})
	if err != nil {
		t.Fatal(err)
	}
	live, err := Create(parent, "live", 16<<20, Limits{WriteIOPS: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	done, err := Cleanup(parent, func(name string) bool { return name == "gone" })
	if err != nil || len(done) != 1 || done[0] != "gone" {
		t.Fatalf("Cleanup: %v, %v; want [gone]", done, err)
	}
	out, _ := output("losetup", "--list", "--noheadings", "--output", "NAME")
	rules, _ := os.ReadFile(filepath.Join(cgroup.Root, "blkio", "blkio.throttle.write_iops_device"))
	if _, err := os.Stat(stale.image); !os.IsNotExist(err) || mounted(stale.dir) ||
		containsField(out, stale.dev) || containsField(string(rules), stale.majMin) || !containsField(string(rules), live.majMin) {
		t.Errorf("after Cleanup: image %v, mounted %v, loop devices %q, rules %q; want only the live volume's", err, mounted(stale.dir), out, rules)
	}
}

func containsField(s, field string) bool {
	for _, f := range strings.Fields(s) {
		if f == field {
			return true
		}
	}
	return false
}
