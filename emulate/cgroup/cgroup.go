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
	"strconv"
	"strings"
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

// Throttled is how many periods the group ran out of quota in (nr_throttled).
func (g *Group) Throttled() (int64, error) {
	return statField(filepath.Join(g.dirs[0], "cpu.stat"), "nr_throttled")
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
