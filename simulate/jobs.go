package simulate

import (
	"trafficlab/model/client"
	"trafficlab/sim"
)

// Job states.
const (
	jobFree    uint8 = iota
	jobWire          // on its way to the pod
	jobQueued        // read by the app, waiting for a worker
	jobCPU           // on CPU
	jobWaiting       // off CPU (I/O, a dependency), holding its worker
	jobLogging       // blocked writing its access-log line, holding its worker
	jobReply         // the answer is on its way back
	jobDead          // its pod died while it waited off CPU
	jobCalling       // waiting for its calls to other services, holding its worker
)

// job is a request as the server sees it.
type job struct {
	slot    int32
	gen     uint32
	pod     int32
	state   uint8
	newConn bool
	// closeAfter: the answer carries Connection: close (the pod is draining).
	closeAfter bool
	// unavailable: the answer is a 503, because a call the app made failed.
	unavailable bool
	wait        int64
	conn        client.ConnID // the connection it came on, while connSeq[conn] == seq
	seq         uint32
	serial      uint32 // unique among live jobs, for events that must not hit a reused one

	// Where its time went at the pod (diagnosis.go): mark is when its current part
	// began, thr its container's throttled time then; served the pod that answered it
	// (-1: none yet), copied to an envoy's job from its attempt.
	spent  spent
	mark   sim.Time
	thr    sim.Time
	served int32

	// outbound: the app sent this job to its client pod's sidecar (the mesh holds
	// its state there). attempt: this job is an outbound envoy's request to a pod on
	// behalf of job parent, the app's request to that envoy.
	outbound bool
	attempt  bool
	parent   int32
	// delivered tells that a request reached its pod.
	delivered bool
}
