package scenario

import (
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hpactl "trafficlab/model/hpa"
	"trafficlab/model/kubeproxy"
	"trafficlab/model/library"
	"trafficlab/model/sidecar"
)

// Defaults of fields a scenario may leave out.
const (
	defaultPoolName     = "worker"
	defaultPoolCount    = 3
	defaultTimeout      = 30 * time.Second
	defaultLocalLatency = 20 * time.Microsecond

	// kube-proxy's --iptables-min-sync-period and --nftables-min-sync-period default
	// (pkg/proxy/apis/config/v1alpha1/defaults.go).
	defaultMinSyncPeriod = time.Second
	// Assumptions for a small, quiet cluster, not Kubernetes constants: the kubelet's
	// status update, the EndpointSlice controller and the watch take a few hundred
	// milliseconds end to end; the CNI releases an IP about a second after the last
	// container exits.
	defaultPropagationLatency = 200 * time.Millisecond
	defaultPropagationJitter  = 300 * time.Millisecond
	defaultNetworkTeardown    = time.Second
	// Kubernetes' SLO for stateless pod start-up with pulled images is 5 s at the
	// 99th percentile (community/sig-scalability/slos/pod_startup_latency.md); 2 s is
	// a typical pod, not a bound.
	defaultStartupDelay = 2 * time.Second

	// kube-controller-manager's HPA flags
	// (pkg/controller/podautoscaler/config/v1alpha1/defaults.go) and metrics-server's
	// resolution as commonly deployed.
	defaultHPASync          = 15 * time.Second
	defaultHPATolerance     = 0.1
	defaultHPADownscale     = 5 * time.Minute
	defaultHPACPUInit       = 5 * time.Minute
	defaultHPAReadinessWait = 30 * time.Second
	defaultMetricResolution = 15 * time.Second

	// Sizes of a request and an answer. Assumptions, not measurements: a request line
	// and a handful of headers (Host, User-Agent, Accept, ...) come to about 200 bytes,
	// and so does a small answer's status line, headers and body.
	defaultRequestMethod = "GET"
	defaultHeaderBytes   = 200
	defaultResponseBytes = 200
	// Go's HTTP/2 server (golang.org/x/net/http2 server.go defaultMaxStreams, bundled in
	// net/http as http2defaultMaxStreams) advertises SETTINGS_MAX_CONCURRENT_STREAMS 250.
	defaultMaxConcurrentStreams = 250
	// Go's HTTP/2 receive windows (golang.org/x/net/http2): the server's
	// initialStreamRecvWindowSize and initialConnRecvWindowSize default to 1 MiB
	// (server.go, when MaxUploadBufferPerStream/PerConnection are unset); the
	// transport's transportDefaultStreamFlow is 4 MiB and transportDefaultConnFlow
	// 1 GiB (transport.go).
	defaultServerStreamWindow = 1 << 20
	defaultServerConnWindow   = 1 << 20
	defaultClientStreamWindow = 4 << 20
	defaultClientConnWindow   = 1 << 30

	// Istio's injected istio-proxy CPU limit (manifests values.yaml global.proxy.resources),
	// from which an unset concurrency is derived (sidecar.Concurrency).
	defaultSidecarCPULimitMilli = sidecar.IstioProxyCPULimitMilli
	// Istio's performance page: worker CPU per request through one sidecar.
	defaultSidecarPerRequestCPU = time.Duration(sidecar.SidecarCPUPerRequest)
	// Istio's outbound clusters: no DestinationRule, so HTTP/1.1 to the next hop (the
	// h2UpgradePolicy default DO_NOT_UPGRADE) and LEAST_REQUEST since Istio 1.14.
	defaultSidecarUpstreamProtocol = ProtocolHTTP1
	defaultSidecarLBPolicy         = LBLeastRequest
	// Istio sets every Envoy circuit breaker threshold to math.MaxUint32 when no
	// DestinationRule sets it (pilot/pkg/networking/core getDefaultCircuitBreakerThresholds),
	// where Envoy's own default is 1024.
	defaultCircuitBreaker = math.MaxUint32
	// Istio's default retry policy (pilot/pkg/networking/core/route/retry DefaultPolicy):
	// 2 retries on these conditions (503 as the retriable status code), preferring hosts
	// not tried yet.
	defaultRetryAttempts = 2

	// Per-request latency samples a result keeps; enough for a scatter plot, bounded so
	// memory does not grow with the run.
	defaultReportSamples = 10000
)

// A readinessProbe's defaults, Kubernetes' (pkg/apis/core/v1/defaults.go
// SetDefaults_Probe): what a probe's unset timing is.
const (
	DefaultProbePeriodSeconds    = 10
	DefaultProbeTimeoutSeconds   = 1
	DefaultProbeSuccessThreshold = 1
	DefaultProbeFailureThreshold = 3
)

// defaultRetryOn is the retryOn of Istio's default retry policy (see defaultRetryAttempts).
var defaultRetryOn = []string{"connect-failure", "refused-stream", "unavailable", "cancelled", "retriable-status-codes"}

// IstioRetryOn tells whether the retry conditions are Istio's default ones.
func (r *Retries) IstioRetryOn() bool { return slices.Equal(r.RetryOn, defaultRetryOn) }

// Unlimited tells whether every threshold is Istio's default, in effect none.
func (c *CircuitBreakers) Unlimited() bool {
	for _, t := range []*int64{c.MaxConnections, c.MaxPendingRequests, c.MaxRequests, c.MaxRetries} {
		if t != nil && *t != defaultCircuitBreaker {
			return false
		}
	}
	return true
}

// setDefaults fills the fields the user left out. Fields that only mean something in one
// mode (ipvsScheduler with ipvs, arrival with an open loop) are defaulted only in that
// mode, so validation can still tell that a user set them where they do nothing.
func setDefaults(s *Scenario) {
	c := &s.Spec.Cluster
	if c.ProxyMode.IsZero() {
		c.ProxyMode = kubeproxy.Iptables
	}
	if c.ProxyMode == kubeproxy.IPVS && c.IPVSScheduler == "" {
		c.IPVSScheduler = IPVSRoundRobin
	}
	if c.ProxyMode.Relays() {
		conn, req, kib := c.ProxyMode.RelayCPU()
		defaultDuration(&c.ProxyWork.PerConnection, conn)
		defaultDuration(&c.ProxyWork.PerRequest, req)
		defaultDuration(&c.ProxyWork.PerKiB, kib)
	}
	if len(c.Nodes) == 0 {
		c.Nodes = []NodePool{{Name: defaultPoolName, Count: defaultPoolCount}}
	}
	defaultGilbertElliott(c.Network.GilbertElliott)
	for i := range c.Network.Links {
		defaultGilbertElliott(c.Network.Links[i].Link.GilbertElliott)
	}
	if c.Network.CongestionControl == "" {
		c.Network.CongestionControl = CongestionCubic
	}
	if c.Network.LocalLatency == nil {
		c.Network.LocalLatency = &metav1.Duration{Duration: defaultLocalLatency}
	}
	defaultDuration(&c.MinSyncPeriod, defaultMinSyncPeriod)
	defaultDuration(&c.PodNetworkTeardown, defaultNetworkTeardown)
	defaultDuration(&c.EndpointPropagation.Latency, defaultPropagationLatency)
	defaultDuration(&c.EndpointPropagation.Jitter, defaultPropagationJitter)
	defaultNetwork(&c.Network)
	for i := range s.Spec.Services {
		defaultPod(&s.Spec.Services[i].Pod)
		defaultCalls(&s.Spec.Services[i].Pod)
		if a := s.Spec.Services[i].Autoscaler; a != nil {
			defaultAutoscaler(a)
		}
		if sc := s.Spec.Services[i].Sidecar; sc != nil {
			defaultSidecar(sc)
		}
		DefaultStrategy(&s.Spec.Services[i].Strategy)
	}
	for i := range s.Spec.Clients {
		defaultClient(&s.Spec.Clients[i])
	}
	for i := range s.Spec.Faults {
		defaultFault(&s.Spec.Faults[i], s.Spec.Duration)
	}
	for i := range s.Spec.Background {
		defaultBackground(&s.Spec.Background[i])
	}
	defaultDuration(&s.Spec.Report.SlowThreshold, defaultSlowThreshold)
	if s.Spec.Report.Samples == nil {
		n := defaultReportSamples
		s.Spec.Report.Samples = &n
	}
}

// defaultNetwork sets the jitter distribution where there is jitter, and the direction
// of each link override.
func defaultNetwork(n *Network) {
	if n.Jitter != nil && n.JitterDistribution == "" {
		n.JitterDistribution = JitterUniform
	}
	for i := range n.Links {
		o := &n.Links[i]
		if o.Direction == "" {
			o.Direction = DirectionBoth
		}
		// A link override's jitter is its own: its distribution is uniform unless it
		// says otherwise, whatever the network's.
		if o.Link.Jitter != nil && o.Link.JitterDistribution == "" {
			o.Link.JitterDistribution = JitterUniform
		}
	}
}

// defaultFault sets a network fault's direction and end; a pod-kill, which happens at
// its start and has no direction, gets neither.
func defaultFault(f *Fault, duration metav1.Duration) {
	if f.Kind == FaultPodKill {
		return
	}
	if f.Direction == "" {
		// Chaos Mesh's NetworkChaos direction defaults to "to".
		f.Direction = DirectionTo
	}
	if f.End == nil {
		f.End = &metav1.Duration{Duration: duration.Duration}
	}
}

// defaultSidecar fills what Istio would for a sidecar nobody tuned.
func defaultSidecar(s *Sidecar) {
	if s.Concurrency == nil {
		// Unset: Istio ≥ 1.18 takes the proxy's CPU limit rounded up to whole cores,
		// Istio's default limit when the scenario gives none.
		limit := int64(defaultSidecarCPULimitMilli)
		if s.CPU != nil {
			limit = s.CPU.MilliValue()
		}
		n := sidecar.Concurrency(sidecar.ConcurrencyUnset, limit, 0, 0)
		s.Concurrency = &n
	}
	defaultDuration(&s.PerRequestCPU, defaultSidecarPerRequestCPU)
	if s.UpstreamProtocol == "" {
		s.UpstreamProtocol = defaultSidecarUpstreamProtocol
	}
	if s.LBPolicy == "" {
		s.LBPolicy = defaultSidecarLBPolicy
	}
	cb := &s.CircuitBreakers
	for _, t := range []**int64{&cb.MaxConnections, &cb.MaxPendingRequests, &cb.MaxRequests, &cb.MaxRetries} {
		if *t == nil {
			v := int64(defaultCircuitBreaker)
			*t = &v
		}
	}
	if s.Retries == nil {
		s.Retries = &Retries{}
	}
	// Istio keeps its default attempts and conditions for what a VirtualService's
	// retries leave out (pilot/pkg/networking/core/route/retry ConvertPolicy).
	if s.Retries.Attempts == nil {
		n := defaultRetryAttempts
		s.Retries.Attempts = &n
	}
	if s.Retries.RetryOn == nil {
		s.Retries.RetryOn = slices.Clone(defaultRetryOn)
	}
}

func defaultDuration(d **metav1.Duration, v time.Duration) {
	if *d == nil {
		*d = &metav1.Duration{Duration: v}
	}
}

func defaultInt32(p **int32, v int32) {
	if *p == nil {
		*p = &v
	}
}

func defaultPod(p *Pod) {
	fromAppContainer(p)
	defaultResources(&p.Resources, p.CPU)
	if p.Resources.Limits != nil {
		if q, ok := p.Resources.Limits[corev1.ResourceCPU]; ok && p.CPU == nil {
			p.CPU = &q
		}
	}
	if a := p.AccessLog; a != nil {
		defaultAccessLog(a)
	}
	if p.ResponseBytes == nil {
		n := int64(defaultResponseBytes)
		p.ResponseBytes = &n
	}
	if p.MaxConcurrentStreams == nil {
		n := defaultMaxConcurrentStreams
		p.MaxConcurrentStreams = &n
	}
	p.HTTP2 = defaultWindows(p.HTTP2, defaultServerStreamWindow, defaultServerConnWindow)
	if p.StartupDelay == nil {
		p.StartupDelay = &Distribution{Distribution: DistConstant, Value: metav1.Duration{Duration: defaultStartupDelay}}
	}
	if p.ReadinessProbe != nil {
		r := p.ReadinessProbe
		defaultInt32(&r.PeriodSeconds, DefaultProbePeriodSeconds)
		defaultInt32(&r.TimeoutSeconds, DefaultProbeTimeoutSeconds)
		defaultInt32(&r.SuccessThreshold, DefaultProbeSuccessThreshold)
		defaultInt32(&r.FailureThreshold, DefaultProbeFailureThreshold)
	}
	if p.TerminationGracePeriodSeconds == nil {
		g := int64(corev1.DefaultTerminationGracePeriodSeconds)
		p.TerminationGracePeriodSeconds = &g
	}
	if p.OnSigterm.Action == "" {
		p.OnSigterm.Action = SigtermExit
	}
	if p.Lifecycle != nil && p.Lifecycle.PreStop != nil {
		if x := p.Lifecycle.PreStop.Exec; x != nil && x.Duration == nil {
			if d, ok := SleepCommand(x.Command); ok {
				x.Duration = &metav1.Duration{Duration: d}
			}
		}
	}
}

// SleepCommand reads the duration of `sleep N`, given directly or as `sh -c "sleep N"`,
// the usual preStop hook. N is in seconds, or has GNU sleep's suffix s, m, h or d.
func SleepCommand(cmd []string) (time.Duration, bool) {
	if len(cmd) == 3 && cmd[1] == "-c" && strings.HasSuffix(path.Base(cmd[0]), "sh") {
		cmd = strings.Fields(cmd[2])
	}
	if len(cmd) != 2 || path.Base(cmd[0]) != "sleep" {
		return 0, false
	}
	n, unit := cmd[1], time.Second
	if i := len(n) - 1; i > 0 {
		switch n[i] {
		case 's':
			n = n[:i]
		case 'm':
			n, unit = n[:i], time.Minute
		case 'h':
			n, unit = n[:i], time.Hour
		case 'd':
			n, unit = n[:i], 24*time.Hour
		}
	}
	v, err := strconv.ParseFloat(n, 64)
	// `sleep infinity` is cut by the grace period; how long that is, is for the user to say.
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return time.Duration(v * float64(unit)), true
}

func defaultAutoscaler(a *Autoscaler) {
	// pkg/apis/autoscaling/v2/defaults.go: minReplicas defaults to 1.
	defaultInt32(&a.MinReplicas, 1)
	// pkg/apis/autoscaling/v2/defaults.go SetDefaults_HorizontalPodAutoscaler: no
	// metrics means 80 % average CPU utilization. Behavior is left as written: the hpa
	// package applies Kubernetes' scaling rules where it is absent.
	if len(a.Metrics) == 0 {
		a.Metrics = hpactl.DefaultMetrics()
	}
	c := &a.Controller
	defaultDuration(&c.SyncPeriod, defaultHPASync)
	if c.Tolerance == nil {
		t := defaultHPATolerance
		c.Tolerance = &t
	}
	defaultDuration(&c.DownscaleStabilization, defaultHPADownscale)
	defaultDuration(&c.CPUInitializationPeriod, defaultHPACPUInit)
	defaultDuration(&c.InitialReadinessDelay, defaultHPAReadinessWait)
	defaultDuration(&c.MetricResolution, defaultMetricResolution)
}

func defaultClient(c *Client) {
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.Repeat == 0 {
		c.Repeat = 1
	}
	if c.Arrival == "" && openLoop(c) {
		c.Arrival = ArrivalConstant
	}
	if c.Request.Method == "" {
		c.Request.Method = defaultRequestMethod
	}
	if c.Request.HeaderBytes == nil {
		n := int64(defaultHeaderBytes)
		c.Request.HeaderBytes = &n
	}
	if c.Sidecar != nil {
		defaultSidecar(c.Sidecar)
	}
	if r := c.RateCurve; r != nil && r.Diurnal != nil {
		defaultDuration(&r.Diurnal.Period, defaultDiurnalPeriod)
	}
	p, hasProfile := library.Lookup(c.Library)
	if c.Timeout == nil {
		// The library's own timeout when it has one; a run needs some bound otherwise.
		t := defaultTimeout
		if hasProfile && p.Timeout > 0 {
			t = p.Timeout
		}
		c.Timeout = &metav1.Duration{Duration: t}
	}
	// The library's profile first, then the generic defaults for whatever is still unset.
	if hasProfile {
		defaultConnections(&c.Connections, p)
	}
	defaultDuration(&c.Work.PerRequest, p.RequestCPU)
	defaultDuration(&c.Work.PerConnection, p.ConnectionCPU)
	if c.Work.Steady == nil {
		c.Work.Steady = resource.NewMilliQuantity(p.SteadyMilliCPU, resource.DecimalSI)
	}
	defaultResources(&c.Resources, nil)
	defaultConnections(&c.Connections, library.Profile{Reuse: ReuseShared, Protocol: ProtocolHTTP1})
}

// openLoop reports whether any of a client's load is an open loop (a rate).
func openLoop(c *Client) bool {
	return c.Rate != nil || c.RateCurve != nil || slices.ContainsFunc(c.Phases, func(p Phase) bool { return p.Rate != nil })
}

// closedLoop reports whether any of a client's load is a closed loop (threads).
func closedLoop(c *Client) bool {
	if len(c.Phases) == 0 {
		return c.Rate == nil && c.RateCurve == nil
	}
	return slices.ContainsFunc(c.Phases, func(p Phase) bool { return p.Rate == nil })
}

// defaultConnections fills each unset field of conn from profile p.
func defaultConnections(conn *Connections, p library.Profile) {
	if conn.Reuse == "" {
		conn.Reuse = p.Reuse
	}
	if conn.MaxPerHost == nil {
		conn.MaxPerHost = &p.MaxPerHost
	}
	if conn.MaxIdlePerHost == nil {
		conn.MaxIdlePerHost = &p.MaxIdlePerHost
	}
	if conn.IdleTimeout == nil {
		conn.IdleTimeout = &metav1.Duration{Duration: p.IdleTimeout}
	}
	if conn.MaxLifetime == nil {
		conn.MaxLifetime = &metav1.Duration{Duration: p.MaxLifetime}
	}
	if conn.Protocol == "" {
		conn.Protocol = p.Protocol
	}
	if conn.Protocol == ProtocolGRPC && conn.LoadBalancing == "" {
		conn.LoadBalancing = PickFirst
	}
	if Multiplexed(conn.Protocol) {
		conn.HTTP2 = defaultWindows(conn.HTTP2, defaultClientStreamWindow, defaultClientConnWindow)
	}
}

// defaultWindows fills HTTP/2 receive windows left out.
func defaultWindows(w *HTTP2Windows, stream, conn int64) *HTTP2Windows {
	if w == nil {
		w = &HTTP2Windows{}
	}
	if w.StreamWindowBytes == nil {
		w.StreamWindowBytes = &stream
	}
	if w.ConnectionWindowBytes == nil {
		w.ConnectionWindowBytes = &conn
	}
	return w
}

// defaultGilbertElliott gives a burst-loss model netem's defaults: every packet lost
// in the bad state (1-h = 100%), none in the good one (1-k = 0%).
func defaultGilbertElliott(g *GilbertElliott) {
	if g == nil {
		return
	}
	if g.BadLoss == nil {
		g.BadLoss = &Percent{Fraction: 1}
	}
	if g.GoodLoss == nil {
		g.GoodLoss = &Percent{}
	}
}
