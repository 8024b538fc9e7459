package simulate

import (
	"trafficlab/model/client"
	"trafficlab/model/netw"
	"trafficlab/model/sidecar"
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
	wait       int64
	conn       client.ConnID // the connection it came on, while connSeq[conn] == seq
	seq        uint32
	serial     uint32 // unique among live jobs, for events that must not hit a reused one

	// Where its time went at the pod (diagnosis.go): mark is when its current part
	// began, thr its container's throttled time then; served the pod that answered it
	// (-1: none yet), copied to an envoy's job from its attempt.
	spent  spent
	mark   sim.Time
	thr    sim.Time
	served int32

	// In a sidecar (sidecar.go): the envoy, its worker and the stage there.
	envoy  int32
	worker int16
	stage  uint8
	// attempt: this job is an outbound envoy's request to a pod on behalf of job
	// parent, the app's request to that envoy.
	attempt bool
	parent  int32
	// An outbound envoy's request: the pod it goes to, the pods tried, the pool and
	// connection of the attempt in progress (upConn -1: none), how it failed.
	target        int32
	tried         [3]int32
	tries         uint8
	retryHeld     bool
	failing       bool   // an evUpFail is on its way for the attempt in progress
	waiting       bool   // queued in a pool for a connection
	attemptSerial uint32 // the attempt in progress, for its timers
	// child is the attempt's job at the pod while childSerial matches; delivered
	// tells that a request reached its pod.
	child       int32
	childSerial uint32
	delivered   bool
	// HTTP/2 flow control of the message being sent: DATA bytes not yet sent, the
	// stream's credit, chunks on their way.
	dataLeft, streamCredit int64
	chunksOut              int32
	flowDir                netw.Dir
	reset                  bool // its HTTP/2 stream was reset: no answer is sent
	failure                sidecar.AttemptEnd
	pool                   int32
	upConn                 client.ConnID
	upSeq                  uint32
	cause                  int32
}
