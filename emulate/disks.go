package emulate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"trafficlab/emulate/disk"
	"trafficlab/placement"
	"trafficlab/result"
	"trafficlab/scenario"
)

// DisksDir holds the nodes' volumes of every run (emulate/disk), each named after
// its run's prefix and its node, so that Cleanup finds a killed run's.
var DisksDir = filepath.Join(os.TempDir(), "trafficlab-emulate-disks")

// diskSize is a node volume's image, sparse: it takes on this machine's disk only
// what is written, and bounds it.
const diskSize = 2 << 30

// volume is a node that gets a volume, and its limits.
type volume struct {
	node    string
	lim     disk.Limits
	limited bool // it has a limit: its writes can wait
}

// volumes are the nodes that get a volume: those whose pool's disk has a limit, or
// that a background workload writes to (unlimited if the pool sets none). Other
// nodes' writes never wait, as in simulate, and go nowhere.
func volumes(sc *scenario.Scenario, l *placement.Layout) []volume {
	written := map[string]bool{}
	for _, p := range l.Background {
		if sc.Spec.Background[p.Index].DiskWriteBytesPerSecond != nil {
			written[p.Node] = true
		}
	}
	var out []volume
	for i, pool := range nodePools(sc) {
		v := volume{node: l.Nodes[i]}
		if d := pool.Disk; d != nil {
			v.lim.WriteIOPS = d.IOPS
			if d.WriteBytesPerSecond != nil {
				v.lim.WriteBytesPerSecond = d.WriteBytesPerSecond.Value()
			}
		}
		v.limited = v.lim != disk.Limits{}
		if v.limited || written[v.node] {
			out = append(out, v)
		}
	}
	return out
}

// Disks names the nodes that would get a volume, with their limits.
func (p *Plan) Disks() []string {
	var out []string
	for _, v := range volumes(p.Scenario, p.Layout) {
		lim := "no limit"
		if v.limited {
			var parts []string
			if b := v.lim.WriteBytesPerSecond; b > 0 && b%(1<<20) == 0 {
				parts = append(parts, fmt.Sprintf("%d MiB/s", b>>20))
			} else if b > 0 {
				parts = append(parts, fmt.Sprintf("%d bytes/s", b))
			}
			if v.lim.WriteIOPS > 0 {
				parts = append(parts, fmt.Sprintf("%d IOPS", v.lim.WriteIOPS))
			}
			lim = strings.Join(parts, ", ")
		}
		out = append(out, fmt.Sprintf("%s (%s)", v.node, lim))
	}
	return out
}

// makeDisks gives each node volumes names its volume, limited as the scenario says.
func (c *cluster) makeDisks() error {
	for _, v := range volumes(c.sc, c.layout) {
		if err := os.MkdirAll(DisksDir, 0o755); err != nil {
			return err
		}
		d, err := disk.Create(DisksDir, c.net.Prefix()+v.node, diskSize, v.lim)
		if err != nil {
			return err
		}
		if c.disks == nil {
			c.disks = map[string]*nodeDisk{}
		}
		c.disks[v.node] = &nodeDisk{volume: d, limited: v.limited}
	}
	if len(c.disks) > 0 {
		c.logf("node disks (loop devices, throttled to their limits): %d", len(c.disks))
	}
	return nil
}

// nodeDisk is a node's volume and its counts when the load started.
type nodeDisk struct {
	volume  *disk.Disk
	limited bool // it has a limit: its writes can wait
	atStart disk.Stats
}

// podLogFile is where the runtime writes pod's access log on node's disk, as the
// kubelet lays out container logs (/var/log/pods/…/CONTAINER/0.log); "" when the pod
// logs nothing or its node's writes never wait.
func (c *cluster) podLogFile(pod, node string, spec *scenario.Pod) string {
	nd := c.disks[node]
	if nd == nil || !nd.limited || spec.AccessLog == nil {
		return ""
	}
	return filepath.Join(nd.volume.Dir(), "var/log/pods", pod, "app", "0.log")
}

// diskResults adds to the nodes how busy their disks were over dur seconds: the
// share of the volume's limits used, bytes written over the byte limit or
// operations over the IOPS limit, whichever is more, as model/disk counts a write's
// time. (The device's own busy time says nothing here: a throttled write waits
// above it, in the block layer's throttle.)
func (c *cluster) diskResults(nodes []result.Node, dur float64) {
	for i := range nodes {
		nd := c.disks[nodes[i].Name]
		if nd == nil || !nd.limited || dur <= 0 {
			continue
		}
		st, err := nd.volume.Stats()
		if err != nil {
			continue
		}
		lim := nd.volume.Limits()
		used := 0.0
		if lim.WriteBytesPerSecond > 0 {
			used = float64(st.Bytes-nd.atStart.Bytes) / float64(lim.WriteBytesPerSecond)
		}
		if lim.WriteIOPS > 0 {
			used = max(used, float64(st.Writes-nd.atStart.Writes)/float64(lim.WriteIOPS))
		}
		nodes[i].DiskUtilization = result.Round(min(1, used/dur), 4)
	}
}

// addLogWaits ends the pods whose logs go to a disk and adds, once their log
// writers have written what was left, the longest write of a log line on each
// node's disk. It ends the pods: after the result took their state.
func (c *cluster) addLogWaits(r *result.Result) {
	c.mu.Lock()
	servers := append([]*server(nil), c.servers...)
	c.closing = true // the pods' exits are the run's end, not pod changes
	c.mu.Unlock()
	for _, s := range servers {
		if s.log == nil {
			continue
		}
		if err := s.kill(); err != nil {
			c.mu.Lock()
			c.errs = append(c.errs, err)
			c.mu.Unlock()
			continue
		}
		for i := range r.Nodes {
			if r.Nodes[i].Name == s.node {
				r.Nodes[i].DiskMaxWaitMS = max(r.Nodes[i].DiskMaxWaitMS, result.Round(float64(s.log.stats.MaxWriteWait)/1e6, 3))
			}
		}
	}
}

// closeDisks removes the nodes' volumes, once nothing writes to them.
func (c *cluster) closeDisks() error {
	var errs []error
	for _, nd := range c.disks {
		errs = append(errs, nd.volume.Close())
	}
	return errors.Join(errs...)
}
