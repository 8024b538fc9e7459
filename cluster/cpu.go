package cluster

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
)

// cpuMeter reads the CPU the run's pods and their nodes use from each node's
// kubelet (its Summary API, GET /api/v1/nodes/NODE/proxy/stats/summary), every
// second while the load runs. The kubelet refreshes a container's figures every
// few seconds (cAdvisor's housekeeping) and stamps each with its time, so a pod's
// cores are its usage between its first and last reading over the time between
// them, not over the run's wall time.
type cpuMeter struct {
	cs     kubernetes.Interface
	ns     string
	w      *watcher
	mu     sync.Mutex
	pods   map[string]*usage // by pod name
	nodes  map[string]*usage
	stopCh chan struct{}
	done   chan struct{}
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
	return &cpuMeter{cs: cs, ns: ns, w: w, pods: map[string]*usage{}, nodes: map[string]*usage{},
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
		for {
			m.readAll()
			select {
			case <-tick.C:
			case <-m.stopCh:
				m.readAll()
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

// readAll reads the summary of every node the run's pods are on. A node that
// does not answer is read again next time.
func (m *cpuMeter) readAll() {
	for _, node := range m.w.nodes() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		raw, err := m.cs.CoreV1().RESTClient().Get().Resource("nodes").Name(node).SubResource("proxy").Suffix("stats/summary").DoRaw(ctx)
		cancel()
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
