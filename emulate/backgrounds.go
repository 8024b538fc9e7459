package emulate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"

	"trafficlab/emulate/background"
	"trafficlab/emulate/cgroup"
	"trafficlab/placement"
	"trafficlab/result"
)

// backgroundPod is a background workload's pod: a `trafficlab background` process
// (emulate/background) in a control group with its CPU limit, on the node the
// simulation placed it, writing to that node's volume.
type backgroundPod struct {
	placed placement.PlacedPod
	group  *cgroup.Group
	cmd    *exec.Cmd
	out    bytes.Buffer
	stderr bytes.Buffer
	exited chan struct{}
	report background.Report
}

// startBackgrounds starts every background workload's process, which waits for the
// run's start; their groups are made first, so that they burn under their limits
// from the start.
func (c *cluster) startBackgrounds() error {
	for _, p := range c.layout.Background {
		spec := &c.sc.Spec.Background[p.Index]
		bp := &backgroundPod{placed: p, exited: make(chan struct{})}
		var milli int64
		if q, ok := spec.Resources.Limits[corev1.ResourceCPU]; ok {
			milli = q.MilliValue()
		}
		var err error
		if bp.group, err = cgroup.Create(c.net.Prefix()+p.Name, milli); err != nil {
			return err
		}
		c.backgrounds = append(c.backgrounds, bp)
		data, err := json.Marshal(spec)
		if err != nil {
			return err
		}
		args := []string{"background", "--spec-json", string(data), "--start", strconv.FormatInt(c.start.UnixNano(), 10),
			"--duration", c.sc.Spec.Duration.Duration.String()}
		if spec.DiskWriteBytesPerSecond != nil {
			nd := c.disks[p.Node]
			dir := filepath.Join(nd.volume.Dir(), "background", p.Name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			args = append(args, "--file", filepath.Join(dir, "data"))
		}
		bp.cmd = exec.Command(c.opt.Exe, args...)
		bp.cmd.Stdout, bp.cmd.Stderr = &bp.out, &bp.stderr
		bp.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := c.spawner.start(bp.cmd); err != nil {
			return fmt.Errorf("background workload %s: %w", p.Name, err)
		}
		go func() {
			_ = bp.cmd.Wait()
			close(bp.exited)
		}()
		if err := bp.group.Add(bp.cmd.Process.Pid); err != nil {
			return err
		}
	}
	return nil
}

// backgroundEnd bounds the wait for a workload to stop and report after the run:
// a write(2) of a chunk in progress may wait for the node's disk.
const backgroundEnd = 10 * time.Second

// stopBackgrounds ends the workloads (SIGTERM: each reports what it wrote) and
// reads their reports.
func (c *cluster) stopBackgrounds() {
	for _, bp := range c.backgrounds {
		if bp.cmd == nil || bp.cmd.Process == nil {
			continue
		}
		_ = bp.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-bp.exited:
		case <-time.After(backgroundEnd):
			c.errs = append(c.errs, fmt.Errorf("background workload %s did not stop within %v", bp.placed.Name, backgroundEnd))
			continue
		}
		if err := json.Unmarshal(bp.out.Bytes(), &bp.report); err != nil {
			c.errs = append(c.errs, fmt.Errorf("background workload %s: %v: %s", bp.placed.Name, err, bytes.TrimSpace(bp.stderr.Bytes())))
		}
	}
}

// backgroundResults are the workloads as simulate reports them, over dur seconds:
// CPU from their groups, bytes from their reports.
func (c *cluster) backgroundResults(dur float64) []result.Background {
	var out []result.Background
	for _, bp := range c.backgrounds {
		rb := result.Background{Name: bp.placed.Name, Node: bp.placed.Node, DiskWrittenBytes: bp.report.DiskWrittenBytes}
		if dur > 0 {
			if used, err := bp.group.Usage(); err == nil && c.sc.Spec.Background[bp.placed.Index].CPU != nil {
				rb.CPUCores = result.Round(used.Seconds()/dur, 4)
			}
			rb.DiskBytesPerSecond = result.Round(float64(rb.DiskWrittenBytes)/dur, 0)
		}
		out = append(out, rb)
	}
	return out
}

// killBackgrounds ends whatever is left of the workloads and removes their groups.
func (c *cluster) killBackgrounds() error {
	var errs []error
	for _, bp := range c.backgrounds {
		errs = append(errs, stopPod(bp.cmd, bp.exited, bp.group))
	}
	return errors.Join(errs...)
}
