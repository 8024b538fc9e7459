// Package disk gives an emulated node a disk as a cloud sells one: a block device
// with a file system, whose writes are limited in bytes and in operations per
// second for everyone who writes to it, as a Persistent Disk or an EBS volume
// limits the volume as a whole (model/disk has the sources).
//
// The device is a loop device on a sparse file, formatted ext4 and mounted in a
// directory of its own. The limit is the block I/O controller's throttle on the
// loop device: cgroup v1's blkio.throttle.write_bps_device and
// write_iops_device, set in the root group. In v1 the throttle applies to the
// I/O a group submits; writeback of the page cache is submitted by the kernel's
// flusher threads, which are in the root group, so a limit there holds both
// direct writes and the writeback of buffered ones, and no other device is
// touched. (cgroup v2's io.max has no root-group file and charges writeback to
// the group that dirtied the pages: not done yet.)
//
// The loop device runs with direct I/O to its backing file (losetup
// --direct-io), so the host's page cache holds the emulated node's pages once,
// above the device, where the node's own page cache would be.
package disk

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"trafficlab/emulate/cgroup"
)

// Limits of one volume; 0 is unlimited.
type Limits struct {
	WriteBytesPerSecond int64
	WriteIOPS           int64
}

// throttleFiles are the root group's v1 throttle files, for bytes and for
// operations per second.
func throttleFiles() (bps, iops string, err error) {
	dir := filepath.Join(cgroup.Root, "blkio")
	bps = filepath.Join(dir, "blkio.throttle.write_bps_device")
	if _, err := os.Stat(bps); err != nil {
		return "", "", errors.New("a node's disk needs cgroup v1's blkio controller (blkio.throttle.write_bps_device), which this host does not mount")
	}
	return bps, filepath.Join(dir, "blkio.throttle.write_iops_device"), nil
}

// Disk is one node's volume.
type Disk struct {
	image, dir string
	dev        string // /dev/loopN
	majMin     string // the device's number, MAJ:MIN
	lim        Limits
}

// Create makes the volume name under parent: a sparse image of size bytes, a loop
// device on it, an ext4 file system mounted at parent/name, and the limits. On an
// error it removes what it made.
func Create(parent, name string, size int64, lim Limits) (d *Disk, err error) {
	bps, iops, err := throttleFiles()
	if err != nil {
		return nil, err
	}
	d = &Disk{image: filepath.Join(parent, name+".img"), dir: filepath.Join(parent, name), lim: lim}
	defer func() {
		if err != nil {
			err = errors.Join(err, d.Close())
		}
	}()
	f, err := os.OpenFile(d.image, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return d, err
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return d, err
	}
	// No lazy initialisation: ext4 would otherwise zero its inode tables in the
	// background, through the throttle, for minutes after the mount.
	if err := run("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", d.image); err != nil {
		return d, err
	}
	out, err := output("losetup", "--find", "--show", "--direct-io=on", d.image)
	if err != nil {
		return d, err
	}
	d.dev = strings.TrimSpace(out)
	num, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(d.dev), "dev"))
	if err != nil {
		return d, err
	}
	d.majMin = strings.TrimSpace(string(num))
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return d, err
	}
	if err := run("mount", d.dev, d.dir); err != nil {
		return d, err
	}
	if lim.WriteBytesPerSecond > 0 {
		if err := os.WriteFile(bps, []byte(fmt.Sprintf("%s %d", d.majMin, lim.WriteBytesPerSecond)), 0o644); err != nil {
			return d, fmt.Errorf("throttling %s: %w", d.dev, err)
		}
	}
	if lim.WriteIOPS > 0 {
		if err := os.WriteFile(iops, []byte(fmt.Sprintf("%s %d", d.majMin, lim.WriteIOPS)), 0o644); err != nil {
			return d, fmt.Errorf("throttling %s: %w", d.dev, err)
		}
	}
	return d, nil
}

// Dir is where the volume is mounted.
func (d *Disk) Dir() string { return d.dir }

// Limits are the volume's limits.
func (d *Disk) Limits() Limits { return d.lim }

// Device is the loop device, /dev/loopN.
func (d *Disk) Device() string { return d.dev }

// Stats are the device's write counts since it was made (the kernel's
// /sys/block/DEV/stat, Documentation/block/stat.rst).
type Stats struct {
	Writes int64 // write requests completed
	Bytes  int64
	// Busy is the time the device had I/O in flight; WriteWait the time write
	// requests spent, queue included, summed over them.
	Busy, WriteWait time.Duration
}

// Stats reads the device's counts.
func (d *Disk) Stats() (Stats, error) {
	data, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(d.dev), "stat"))
	if err != nil {
		return Stats{}, err
	}
	f := strings.Fields(string(data))
	if len(f) < 10 {
		return Stats{}, fmt.Errorf("%s stat: %q", d.dev, data)
	}
	field := func(i int) int64 {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		return v
	}
	// Fields: reads, merged, sectors, ticks; writes (4), merged, sectors (6),
	// ticks (7, ms); in flight; io_ticks (9, ms).
	return Stats{Writes: field(4), Bytes: field(6) * 512, WriteWait: time.Duration(field(7)) * time.Millisecond,
		Busy: time.Duration(field(9)) * time.Millisecond}, nil
}

// Close lifts the limits, unmounts the volume, detaches the loop device and
// removes the image: whatever Create got as far as making.
func (d *Disk) Close() error {
	var errs []error
	if d.majMin != "" {
		if bps, iops, err := throttleFiles(); err == nil {
			// A limit of 0 removes the device's rule (blk-throttle, tg_set_conf).
			for _, file := range []string{bps, iops} {
				if err := os.WriteFile(file, []byte(d.majMin+" 0"), 0o644); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	if d.dev != "" {
		if mounted(d.dir) {
			errs = append(errs, run("umount", d.dir))
		}
		errs = append(errs, run("losetup", "--detach", d.dev))
	}
	if err := os.Remove(d.dir); err != nil && !os.IsNotExist(err) {
		errs = append(errs, err)
	}
	if err := os.Remove(d.image); err != nil && !os.IsNotExist(err) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Cleanup removes the volumes under parent whose names stale says belong to a run
// that is gone, and returns their names.
func Cleanup(parent string, stale func(name string) bool) ([]string, error) {
	entries, err := os.ReadDir(parent)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var done []string
	var errs []error
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".img")
		if !ok || !stale(name) {
			continue
		}
		d := &Disk{image: filepath.Join(parent, e.Name()), dir: filepath.Join(parent, name)}
		if out, err := output("losetup", "--list", "--noheadings", "--output", "NAME", "--associated", d.image); err == nil {
			if dev := strings.TrimSpace(out); dev != "" {
				d.dev = strings.Fields(dev)[0]
				if num, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(d.dev), "dev")); err == nil {
					d.majMin = strings.TrimSpace(string(num))
				}
			}
		}
		if err := d.Close(); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, name)
	}
	return done, errors.Join(errs...)
}

// mounted tells whether dir is a mount point, from /proc/self/mounts.
func mounted(dir string) bool {
	data, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == dir {
			return true
		}
	}
	return false
}

func run(name string, args ...string) error {
	_, err := output(name, args...)
	return err
}

func output(name string, args ...string) (string, error) {
	var stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return string(out), nil
}
