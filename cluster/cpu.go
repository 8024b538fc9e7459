package cluster

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"trafficlab/result"
)

// cpuMeter reads the CPU the run's pods and their nodes use from each node's
// kubelet (its Summary API, GET /api/v1/nodes/NODE/proxy/stats/summary), every
// second while the load runs. The kubelet refreshes a container's figures every
// few seconds (cAdvisor's housekeeping) and stamps each with its time, so a pod's
// cores are its usage between its first and last reading over the time between
// them, not over the run's wall time. Every throttleEvery readings, and at the
// end, it also reads the app containers' CFS counters from the kubelet's cAdvisor
// metrics (/metrics/cadvisor), for the pods' throttling.
type cpuMeter struct {
	cs       kubernetes.Interface
	ns       string
	w        *watcher
	mu       sync.Mutex
	pods     map[string]*usage // by pod name
	nodes    map[string]*usage
	throttle map[string]*cfs // the app container's, by pod name
	stopCh   chan struct{}
	done     chan struct{}
}

// usage is a cumulative CPU counter's first and last readings.
type usage struct {
	firstNS, lastNS uint64
	firstAt, lastAt time.Time
}

// cores is the CPU used between the first and last reading, per second; false
// with fewer than two readings apart.
func (u *usage) cores() (float64, bool) {
	if u == nil || !u.lastAt.After(u.firstAt) {
		return 0, false
	}
	return float64(u.lastNS-u.firstNS) / float64(u.lastAt.Sub(u.firstAt).Nanoseconds()), true
}

func (u *usage) read(ns uint64, at time.Time) {
	if u.firstAt.IsZero() {
		u.firstNS, u.firstAt = ns, at
	}
	if at.After(u.lastAt) {
		u.lastNS, u.lastAt = ns, at
	}
}

func newCPUMeter(cs kubernetes.Interface, ns string, w *watcher) *cpuMeter {
	return &cpuMeter{cs: cs, ns: ns, w: w, pods: map[string]*usage{}, nodes: map[string]*usage{}, throttle: map[string]*cfs{},
		stopCh: make(chan struct{}), done: make(chan struct{})}
}

// start reads every second from the start time on, until stop.
func (m *cpuMeter) start(at time.Time) {
	go func() {
		defer close(m.done)
		select {
		case <-time.After(time.Until(at)):
		case <-m.stopCh:
			return
		}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for i := 0; ; i++ {
			m.readAll(i%throttleEvery == 0)
			select {
			case <-tick.C:
			case <-m.stopCh:
				m.readAll(true)
				return
			}
		}
	}()
}

func (m *cpuMeter) stop() {
	close(m.stopCh)
	<-m.done
}

// summary is the part of the kubelet's stats/v1alpha1 Summary read here.
type summary struct {
	Node struct {
		CPU *cpuStats `json:"cpu"`
	} `json:"node"`
	Pods []struct {
		PodRef struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"podRef"`
		CPU *cpuStats `json:"cpu"`
	} `json:"pods"`
}

type cpuStats struct {
	Time                 time.Time `json:"time"`
	UsageCoreNanoSeconds *uint64   `json:"usageCoreNanoSeconds"`
}

// throttleEvery is how many readings apart the cAdvisor metrics are read: they
// are a node's every container, and the kubelet refreshes them every 10 s or so.
const throttleEvery = 5

// readAll reads the summary of every node the run's pods are on, and with
// throttling their cAdvisor metrics. A node that does not answer is read again
// next time.
func (m *cpuMeter) readAll(throttling bool) {
	for _, node := range m.w.nodes() {
		if throttling {
			m.readCFS(node)
		}
		raw, err := m.fromNode(node, "stats/summary", 2*time.Second)
		var s summary
		if err != nil || json.Unmarshal(raw, &s) != nil {
			continue
		}
		m.mu.Lock()
		if c := s.Node.CPU; c != nil && c.UsageCoreNanoSeconds != nil {
			m.usage(m.nodes, node).read(*c.UsageCoreNanoSeconds, c.Time)
		}
		for _, p := range s.Pods {
			if c := p.CPU; p.PodRef.Namespace == m.ns && c != nil && c.UsageCoreNanoSeconds != nil {
				m.usage(m.pods, p.PodRef.Name).read(*c.UsageCoreNanoSeconds, c.Time)
			}
		}
		m.mu.Unlock()
	}
}

// fromNode GETs path from node's kubelet through the API server's node proxy,
// waiting at most timeout.
func (m *cpuMeter) fromNode(node, path string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return m.cs.CoreV1().RESTClient().Get().Resource("nodes").Name(node).SubResource("proxy").Suffix(path).DoRaw(ctx)
}

func (m *cpuMeter) usage(in map[string]*usage, name string) *usage {
	u := in[name]
	if u == nil {
		u = &usage{}
		in[name] = u
	}
	return u
}

// pod is the cores pod used over its readings; false without two.
func (m *cpuMeter) pod(name string) (float64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pods[name].cores()
}

// node is the cores node used over its readings, by every process on it; false
// without two.
func (m *cpuMeter) node(name string) (float64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.nodes[name].cores()
}

// cfs is a container's CFS bandwidth counters, first and last read.
type cfs struct {
	first, last [3]float64 // periods, throttled periods, throttled seconds
	read        int
}

// cfsMetrics are the cAdvisor counters cfs holds, in its order.
var cfsMetrics = [3]string{"container_cpu_cfs_periods_total", "container_cpu_cfs_throttled_periods_total", "container_cpu_cfs_throttled_seconds_total"}

// readCFS reads node's cAdvisor metrics for the run's app containers' counters.
func (m *cpuMeter) readCFS(node string) {
	raw, err := m.fromNode(node, "metrics/cadvisor", 5*time.Second)
	if err != nil {
		return
	}
	read := map[string]*[3]float64{}
	for _, line := range strings.Split(string(raw), "\n") {
		for k, name := range cfsMetrics {
			rest, ok := strings.CutPrefix(line, name+"{")
			if !ok {
				continue
			}
			labels, value, ok := strings.Cut(rest, "} ")
			if !ok || label(labels, "namespace") != m.ns || label(labels, "container") != "app" {
				continue
			}
			v, err := strconv.ParseFloat(strings.Fields(value)[0], 64)
			if err != nil {
				continue
			}
			pod := label(labels, "pod")
			if read[pod] == nil {
				read[pod] = &[3]float64{}
			}
			read[pod][k] = v
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for pod, v := range read {
		c := m.throttle[pod]
		if c == nil {
			c = &cfs{first: *v}
			m.throttle[pod] = c
		}
		c.last = *v
		c.read++
	}
}

// label is a Prometheus label's value in labels (name="value",...); "" if absent.
func label(labels, name string) string {
	_, rest, ok := strings.Cut(","+labels, ","+name+"=\"")
	if !ok {
		return ""
	}
	value, _, _ := strings.Cut(rest, "\"")
	return value
}

// throttling is pod's app container's CFS counters over the run: from its first
// reading, or its start when the run created it (created), to its last; nil
// without a reading.
func (m *cpuMeter) throttling(pod string, created bool) *result.Throttling {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.throttle[pod]
	if c == nil {
		return nil
	}
	first := c.first
	if created {
		first = [3]float64{}
	}
	return &result.Throttling{Periods: int64(c.last[0] - first[0]), ThrottledPeriods: int64(c.last[1] - first[1]),
		ThrottledS: result.Round(c.last[2]-first[2], 6)}
}
