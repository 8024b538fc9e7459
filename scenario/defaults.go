package scenario

import (
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hpactl "trafficlab/model/hpa"
	"trafficlab/model/library"
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

	// pkg/apis/core/v1/defaults.go SetDefaults_Pod and SetDefaults_Probe.
	defaultGracePeriodSeconds = 30
	defaultProbePeriod        = 10
	defaultProbeTimeout       = 1
	defaultProbeSuccess       = 1
	defaultProbeFailure       = 3

	// kube-controller-manager's HPA flags
	// (pkg/controller/podautoscaler/config/v1alpha1/defaults.go) and metrics-server's
	// resolution as commonly deployed.
	defaultHPASync          = 15 * time.Second
	defaultHPATolerance     = 0.1
	defaultHPADownscale     = 5 * time.Minute
	defaultHPACPUInit       = 5 * time.Minute
	defaultHPAReadinessWait = 30 * time.Second
	defaultMetricResolution = 15 * time.Second
)

// setDefaults fills the fields the user left out. Fields that only mean something in one
// mode (ipvsScheduler with ipvs, arrival with an open loop) are defaulted only in that
// mode, so validation can still tell that a user set them where they do nothing.
func setDefaults(s *Scenario) {
	c := &s.Spec.Cluster
	if c.ProxyMode == "" {
		c.ProxyMode = ProxyIptables
	}
	if c.ProxyMode == ProxyIPVS && c.IPVSScheduler == "" {
		c.IPVSScheduler = IPVSRoundRobin
	}
	if len(c.Nodes) == 0 {
		c.Nodes = []NodePool{{Name: defaultPoolName, Count: defaultPoolCount}}
	}
	if c.Network.LocalLatency == nil {
		c.Network.LocalLatency = &metav1.Duration{Duration: defaultLocalLatency}
	}
	defaultDuration(&c.MinSyncPeriod, defaultMinSyncPeriod)
	defaultDuration(&c.PodNetworkTeardown, defaultNetworkTeardown)
	defaultDuration(&c.EndpointPropagation.Latency, defaultPropagationLatency)
	defaultDuration(&c.EndpointPropagation.Jitter, defaultPropagationJitter)
	for i := range s.Spec.Services {
		defaultPod(&s.Spec.Services[i].Pod)
		if a := s.Spec.Services[i].Autoscaler; a != nil {
			defaultAutoscaler(a)
		}
	}
	for i := range s.Spec.Clients {
		defaultClient(&s.Spec.Clients[i])
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
	if p.StartupDelay == nil {
		p.StartupDelay = &Distribution{Distribution: DistConstant, Value: metav1.Duration{Duration: defaultStartupDelay}}
	}
	if p.ReadinessProbe != nil {
		r := p.ReadinessProbe
		defaultInt32(&r.PeriodSeconds, defaultProbePeriod)
		defaultInt32(&r.TimeoutSeconds, defaultProbeTimeout)
		defaultInt32(&r.SuccessThreshold, defaultProbeSuccess)
		defaultInt32(&r.FailureThreshold, defaultProbeFailure)
	}
	if p.TerminationGracePeriodSeconds == nil {
		g := int64(defaultGracePeriodSeconds)
		p.TerminationGracePeriodSeconds = &g
	}
	if p.OnSigterm.Action == "" {
		p.OnSigterm.Action = SigtermExit
	}
	if p.Lifecycle != nil && p.Lifecycle.PreStop != nil {
		if x := p.Lifecycle.PreStop.Exec; x != nil && x.Duration == nil {
			if d, ok := sleepCommand(x.Command); ok {
				x.Duration = &metav1.Duration{Duration: d}
			}
		}
	}
}

// sleepCommand reads the duration of `sleep N`, given directly or as `sh -c "sleep N"`,
// the usual preStop hook. N is in seconds, or has GNU sleep's suffix s, m, h or d.
func sleepCommand(cmd []string) (time.Duration, bool) {
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
	defaultConnections(&c.Connections, library.Profile{Reuse: ReuseShared, Protocol: ProtocolHTTP1})
}

// openLoop reports whether any of a client's load is an open loop (a rate).
func openLoop(c *Client) bool {
	return c.Rate != nil || slices.ContainsFunc(c.Phases, func(p Phase) bool { return p.Rate != nil })
}

// closedLoop reports whether any of a client's load is a closed loop (threads).
func closedLoop(c *Client) bool {
	if len(c.Phases) == 0 {
		return c.Rate == nil
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
}
