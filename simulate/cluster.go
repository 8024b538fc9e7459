package simulate

import (
	"fmt"
	"math/rand/v2"
	"time"

	"trafficlab/model/disk"
	"trafficlab/model/dist"
	"trafficlab/model/netw"
	"trafficlab/model/node"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// diskWriter is what writes to a node's disk: a pod's logs or a background workload.
type diskWriter struct {
	name       string
	background bool
}

type nodeState struct {
	name    string
	cpu     *node.CPU
	disk    *disk.Device // nil: nothing writes, or writes never wait
	writers []diskWriter // by id, for the report
	pods    int
	// nicOut and nicIn are its network interface each way; nil when unlimited.
	nicOut, nicIn *netw.NIC
	// proxy is its kube-proxy process's CPU, once it relays (userspace mode).
	proxy *node.Group
}

type service struct {
	name    string
	spec    *scenario.Service
	pods    []int32 // pods not yet gone, in creation order
	created int     // pods ever created, for their names
	work    dist.Sampler
	wait    dist.Sampler
	startup dist.Sampler
	// respBytes is the size of an answer; streams the app's HTTP/2 stream limit.
	respBytes int
	streams   int
	windows   [2]int64 // the app's HTTP/2 receive windows: stream, connection
	limit     float64  // CPU limit per pod, cores
	// idleTimeout closes the app's HTTP/1.1 connections idle this long; 0 never.
	idleTimeout sim.Time
	// maxAge sends GOAWAY on the app's HTTP/2 connections this old, jittered by
	// ageRNG (pod.grpc.maxConnectionAge); 0 never.
	maxAge sim.Time
	ageRNG *rand.Rand
	// ageGrace closes an aged connection this long after its GOAWAY
	// (pod.grpc.maxConnectionAgeGrace); 0 never.
	ageGrace sim.Time
	weight   float64       // CFS weight per pod
	logCPU   time.Duration // CPU to encode an access-log line
	// Its calls (calls.go): the steps, the CPU after them, its edges (by the place
	// its pods index their callers at) and whether it propagates deadlines.
	calls     []callStep
	after     *dist.Sampler
	edges     []int32
	propagate bool
}

type pod struct {
	name        string
	svc         int32
	node        int32
	grp         *node.Group
	concurrency int
	busy        int
	queue       sim.FIFO[int32] // jobs waiting for a worker
	work, wait  dist.Sampler
	acceptCost  int64
	rng         *rand.Rand
	requests    int64
	tlRequests  int64 // requests at the end of the last timeline interval
	connections int64
	errors      errorCounts // failed requests this pod was the cause of
	diag        podDiag
	// Its access-log path to the node's disk, nil when a log write never waits.
	logCPU int64 // CPU to encode a line, ns

	uid      string
	revision int32 // its ReplicaSet, as service.revision
	envoy    int32 // its sidecar in the mesh, or -1
	// callers are its client pods per Service it calls (its service's edges), made
	// at its first call there; nil until then, -1 for one not made yet.
	callers []int32
	calls   bool // its service makes calls
}

func (e *Engine) addService(si int32, s *scenario.Service) error {
	svc := service{name: s.Name, spec: s}
	var err error
	if svc.work, err = dist.New(s.Pod.ServiceTime.Spec()); err != nil {
		return fieldError(fmt.Sprintf("spec.services[%d].pod.serviceTime", si), err)
	}
	if svc.wait, err = dist.New(s.Pod.WaitTime.Spec()); err != nil {
		return fieldError(fmt.Sprintf("spec.services[%d].pod.waitTime", si), err)
	}
	if svc.startup, err = dist.New(s.Pod.StartupDelay.Spec()); err != nil {
		return fieldError(fmt.Sprintf("spec.services[%d].pod.startupDelay", si), err)
	}
	if s.Pod.CPU != nil {
		svc.limit = s.Pod.CPU.AsApproximateFloat64()
	}
	svc.respBytes = int(*s.Pod.ResponseBytes)
	if svc.idleTimeout = sim.Duration(s.Pod.IdleTimeout.Duration); svc.idleTimeout > 0 {
		e.appCloses.on = true
	}
	if g := s.Pod.GRPC; g != nil && g.MaxConnectionAge != nil {
		svc.maxAge = sim.Duration(g.MaxConnectionAge.Duration)
		svc.ageRNG = sim.Stream(e.sc.Spec.Seed, "grpc-age/"+s.Name)
		e.appCloses.on = true
		if g.MaxConnectionAgeGrace != nil {
			svc.ageGrace = sim.Duration(g.MaxConnectionAgeGrace.Duration)
		}
	}
	svc.streams = *s.Pod.MaxConcurrentStreams
	svc.windows = [2]int64{*s.Pod.HTTP2.StreamWindowBytes, *s.Pod.HTTP2.ConnectionWindowBytes}
	if a := s.Pod.AccessLog; a != nil {
		svc.logCPU = a.CPU.Duration
	}
	// CFS divides a busy node by cpu.weight, which kubelet derives from the CPU request.
	svc.weight = cpuWeight(&s.Pod.Resources)
	e.services = append(e.services, svc)
	e.life.AddService(&s.Pod)
	e.deployments.Add(s)
	for r := 0; r < s.Replicas; r++ {
		e.createPod(si, 0) // a pod no node can take stays Pending
	}
	e.deployments.QueueRollouts(si, e.end)
	if s.Autoscaler != nil {
		return e.addAutoscaler(si)
	}
	return nil
}

func (e *Engine) serviceIndex(name string) int32 {
	for i, s := range e.services {
		if s.name == name {
			return int32(i)
		}
	}
	return -1
}

// nodeIndex is the index of the node called name; validation has checked it exists.
func (e *Engine) nodeIndex(name string) int32 {
	for i := range e.nodes {
		if e.nodes[i].name == name {
			return int32(i)
		}
	}
	panic("simulate: no node " + name)
}
