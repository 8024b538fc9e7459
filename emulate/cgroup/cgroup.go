// Package cgroup gives an emulated pod's processes the CPU limit the kubelet would:
// a CFS quota per 100 ms period, in a control group of their own, and reads back the
// CPU they used, which the HPA's metrics come from. It uses cgroup v2's cpu.max where
// the v2 hierarchy has the cpu controller, else cgroup v1's cpu and cpuacct
// hierarchies (this project's CI machine mounts v1 for cpu): the kernel's CFS
// bandwidth control is the same behind both.
package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"trafficlab/model/node"
)

// Parent is the group every run's groups go under, so that leftovers are easy to
// find and nothing of the host's is touched.
const Parent = "trafficlab"

// Group is one pod's control group.
type Group struct {
	v2   bool
	dirs []string // the group's directories: one in v2; cpu then cpuacct in v1
}

// Root is where the cgroup file system is mounted; a variable so the layout can be
// found (and is only read) in one place.
var Root = "/sys/fs/cgroup"

// v2Dir is the cgroup v2 hierarchy if its root offers the cpu controller: the whole
// of Root on a v2-only host, Root/unified on a hybrid one (which then has no cpu).
func v2Dir() (string, bool) {
	for _, dir := range []string{Root, filepath.Join(Root, "unified")} {
		data, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
		if err == nil && strings.Contains(" "+string(data)+" ", " cpu ") {
			return dir, true
		}
	}
	return "", false
}

// Create makes the group named name (a run's prefix and the pod's name) with a CPU
// limit of milliCPU, or none when milliCPU is 0.
func Create(name string, milliCPU int64) (*Group, error) {
	g := &Group{}
	if dir, ok := v2Dir(); ok {
		g.v2 = true
		parent := filepath.Join(dir, Parent)
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, err
		}
		// A v2 child gets the cpu controller only if its parent delegates it.
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+cpu"), 0o644); err != nil {
			return nil, fmt.Errorf("enabling the cpu controller: %w", err)
		}
		if err := os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+cpu"), 0o644); err != nil {
			return nil, fmt.Errorf("enabling the cpu controller: %w", err)
		}
		g.dirs = []string{filepath.Join(parent, name)}
	} else {
		g.dirs = []string{filepath.Join(Root, "cpu", Parent, name), filepath.Join(Root, "cpuacct", Parent, name)}
	}
	for _, d := range g.dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			g.Remove()
			return nil, fmt.Errorf("cgroup: %w", err)
		}
	}
	if milliCPU > 0 {
		if err := g.limit(milliCPU); err != nil {
			g.Remove()
			return nil, err
		}
	}
	return g, nil
}

// limit writes the quota the kubelet's MilliCPUToQuota gives (the simulator's
// model/node function, so both engines limit alike).
func (g *Group) limit(milliCPU int64) error {
	q := node.MilliCPUToQuota(milliCPU, 0)
	quota, period := strconv.FormatInt(int64(q.Runtime/1000), 10), strconv.FormatInt(int64(q.Period/1000), 10)
	if g.v2 {
		return write(g.dirs[0], "cpu.max", quota+" "+period)
	}
	if err := write(g.dirs[0], "cpu.cfs_period_us", period); err != nil {
		return err
	}
	return write(g.dirs[0], "cpu.cfs_quota_us", quota)
}

// Add moves a process (all its threads) into the group.
func (g *Group) Add(pid int) error {
	for _, d := range g.dirs {
		if err := write(d, "cgroup.procs", strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

// Usage is the CPU time the group's processes have used.
func (g *Group) Usage() (time.Duration, error) {
	if g.v2 {
		v, err := statField(filepath.Join(g.dirs[0], "cpu.stat"), "usage_usec")
		return time.Duration(v) * time.Microsecond, err
	}
	data, err := os.ReadFile(filepath.Join(g.dirs[1], "cpuacct.usage"))
	if err != nil {
		return 0, err
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	return time.Duration(ns), err
}

// Bandwidth is the group's CFS bandwidth statistics (cpu.stat): periods in which it
// had runnable work, periods it ran out of quota in, and the time it was throttled.
type Bandwidth struct {
	Periods, Throttled int64
	ThrottledTime      time.Duration
}

// Stat reads the group's CFS bandwidth statistics.
func (g *Group) Stat() (Bandwidth, error) {
	path := filepath.Join(g.dirs[0], "cpu.stat")
	var b Bandwidth
	var err error
	if b.Periods, err = statField(path, "nr_periods"); err != nil {
		return b, err
	}
	if b.Throttled, err = statField(path, "nr_throttled"); err != nil {
		return b, err
	}
	// v2 counts throttled time in µs, v1 in ns (Documentation/admin-guide/cgroup-v2.rst,
	// Documentation/scheduler/sched-bwc.rst).
	if g.v2 {
		us, err := statField(path, "throttled_usec")
		b.ThrottledTime = time.Duration(us) * time.Microsecond
		return b, err
	}
	ns, err := statField(path, "throttled_time")
	b.ThrottledTime = time.Duration(ns)
	return b, err
}

// Remove deletes the group; it must have no process left.
func (g *Group) Remove() error {
	var errs []error
	for _, d := range g.dirs {
		if err := os.Remove(d); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func write(dir, file, value string) error {
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644); err != nil {
		return fmt.Errorf("cgroup %s: %w", filepath.Join(dir, file), err)
	}
	return nil
}

// statField reads one "key value" line of a cgroup stat file.
func statField(path, key string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("%s has no %s", path, key)
}

// Cleanup kills the processes of the groups under Parent that stale says belong
// to a run that is gone, removes the groups, and returns their names.
func Cleanup(stale func(name string) bool) ([]string, error) {
	var dirs []string
	if dir, ok := v2Dir(); ok {
		dirs = []string{filepath.Join(dir, Parent)}
	} else {
		dirs = []string{filepath.Join(Root, "cpu", Parent), filepath.Join(Root, "cpuacct", Parent)}
	}
	var done []string
	var errs []error
	for _, parent := range dirs {
		entries, err := os.ReadDir(parent)
		if err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
		for _, e := range entries {
			if !e.IsDir() || !stale(e.Name()) {
				continue
			}
			g := &Group{dirs: []string{filepath.Join(parent, e.Name())}}
			if err := g.Kill(); err != nil {
				errs = append(errs, err)
				continue
			}
			if err := g.Remove(); err != nil {
				errs = append(errs, err)
				continue
			}
			if !slices.Contains(done, e.Name()) {
				done = append(done, e.Name())
			}
		}
	}
	return done, errors.Join(errs...)
}

// Kill sends SIGKILL to every process in the group and waits, up to 5 s, until the
// group is empty (a cgroup can only be removed then).
func (g *Group) Kill() error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids, err := g.procs()
		if err != nil || len(pids) == 0 {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup %s: processes %v outlived SIGKILL", g.dirs[0], pids)
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL) // gone already: fine
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// procs lists the processes in the group.
func (g *Group) procs() ([]int, error) {
	var pids []int
	for _, d := range g.dirs {
		data, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids, nil
}
