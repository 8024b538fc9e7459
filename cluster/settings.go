package cluster

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"trafficlab/result"
	"trafficlab/scenario"
)

// Inspect reads what the cluster decides that the scenario also says: kube-proxy's
// mode and minSyncPeriod from its ConfigMap, the clients' library CPU that the
// load pods do not spend, the inputs the engine does not carry out, where the run's pods fit on its nodes
// (Fit), the HPA controller's flags from kube-controller-manager's pod and
// metrics-server's resolution from its Deployment (where the cluster shows them,
// as kubeadm's does), and whether the resource metrics API answers. Each
// difference from sc is a sentence.
func Inspect(ctx context.Context, cs kubernetes.Interface, cfg *rest.Config, sc *scenario.Scenario) (*result.ClusterRun, error) {
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("reaching the API server %s: %w", cfg.Host, err)
	}
	found := &result.ClusterRun{Server: cfg.Host, Version: v.GitVersion}
	differ := func(format string, a ...any) {
		found.Differences = append(found.Differences, fmt.Sprintf(format, a...))
	}
	spec := &sc.Spec

	proxy, err := kubeProxyConfig(ctx, cs)
	switch {
	case err != nil:
		return nil, err
	case proxy == nil:
		differ("kube-proxy's settings are not visible (no ConfigMap kube-system/kube-proxy): the run assumes the scenario's mode %s and minSyncPeriod %v", spec.Cluster.ProxyMode, spec.Cluster.MinSyncPeriod.Duration)
	default:
		found.ProxyMode = proxy.mode
		if proxy.mode != spec.Cluster.ProxyMode.String() {
			differ("kube-proxy runs in %s mode, the scenario says %s", proxy.mode, spec.Cluster.ProxyMode)
		}
		if proxy.minSync != nil {
			s := result.Round(proxy.minSync.Seconds(), 6)
			found.ProxyMinSyncPeriodS = &s
			if *proxy.minSync != spec.Cluster.MinSyncPeriod.Duration {
				differ("kube-proxy's minSyncPeriod is %v, the scenario says %v", *proxy.minSync, spec.Cluster.MinSyncPeriod.Duration)
			}
		}
	}

	found.Differences = append(found.Differences, loadGenerators(sc)...)
	found.Differences = append(found.Differences, unplayed(sc)...)

	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsForbidden(err):
		differ("the cluster's nodes are not visible (listing nodes is forbidden): whether the pods fit them is not checked")
	case err != nil:
		return nil, err
	default:
		found.Differences = append(found.Differences, Fit(nodes.Items, sc)...)
	}

	if _, err := cs.Discovery().ServerResourcesForGroupVersion("metrics.k8s.io/v1beta1"); err == nil {
		found.MetricsServer = true
	}
	for i := range spec.Services {
		s := &spec.Services[i]
		if s.Autoscaler == nil {
			continue
		}
		if !found.MetricsServer {
			differ("service %s: the cluster has no resource metrics API (metrics-server): its HPA reads no CPU and will not scale", s.Name)
		}
		if err := controllerFlags(ctx, cs, &s.Autoscaler.Controller, differ); err != nil {
			return nil, err
		}
		if err := metricsResolution(ctx, cs, &s.Autoscaler.Controller, differ); err != nil {
			return nil, err
		}
		break // one controller for every HPA
	}
	return found, nil
}

// proxyConfig is what kube-proxy's ConfigMap says of the mode and sync period.
type proxyConfig struct {
	mode    string
	minSync *time.Duration
}

// kubeProxyConfig reads kube-system/kube-proxy's config.conf, a
// KubeProxyConfiguration (as kubeadm writes it); nil when there is none. An
// empty mode is iptables on Linux (cmd/kube-proxy/app/server_linux.go).
func kubeProxyConfig(ctx context.Context, cs kubernetes.Interface) (*proxyConfig, error) {
	cm, err := cs.CoreV1().ConfigMaps("kube-system").Get(ctx, "kube-proxy", metav1.GetOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c struct {
		Mode     string `json:"mode"`
		IPTables struct {
			MinSyncPeriod *metav1.Duration `json:"minSyncPeriod"`
		} `json:"iptables"`
		NFTables struct {
			MinSyncPeriod *metav1.Duration `json:"minSyncPeriod"`
		} `json:"nftables"`
		IPVS struct {
			MinSyncPeriod *metav1.Duration `json:"minSyncPeriod"`
		} `json:"ipvs"`
	}
	if err := yaml.Unmarshal([]byte(cm.Data["config.conf"]), &c); err != nil {
		return nil, fmt.Errorf("kube-system/kube-proxy's config.conf: %w", err)
	}
	out := &proxyConfig{mode: c.Mode}
	if out.mode == "" {
		out.mode = "iptables"
	}
	// The configuration has a section per mode, each with its own minSyncPeriod.
	sections := map[string]*metav1.Duration{"iptables": c.IPTables.MinSyncPeriod, "nftables": c.NFTables.MinSyncPeriod, "ipvs": c.IPVS.MinSyncPeriod}
	if sync := sections[out.mode]; sync != nil {
		out.minSync = &sync.Duration
	}
	return out, nil
}

// controllerFlags compares kube-controller-manager's HPA flags, from its pod in
// kube-system (a static pod labelled component=kube-controller-manager, as
// kubeadm's), with the scenario's; a flag not given is its default, as the
// scenario's are.
func controllerFlags(ctx context.Context, cs kubernetes.Interface, want *scenario.HPAController, differ func(string, ...any)) error {
	args, ok, err := podArgs(ctx, cs, "component=kube-controller-manager")
	if err != nil || !ok {
		if !ok && err == nil {
			differ("kube-controller-manager's flags are not visible (no kube-system pod labelled component=kube-controller-manager): the run assumes the scenario's HPA settings")
		}
		return err
	}
	durations := []struct {
		flag string
		want time.Duration
	}{
		{"--horizontal-pod-autoscaler-sync-period", want.SyncPeriod.Duration},
		{"--horizontal-pod-autoscaler-downscale-stabilization", want.DownscaleStabilization.Duration},
		{"--horizontal-pod-autoscaler-cpu-initialization-period", want.CPUInitializationPeriod.Duration},
		{"--horizontal-pod-autoscaler-initial-readiness-delay", want.InitialReadinessDelay.Duration},
	}
	for _, d := range durations {
		if v, ok := args[d.flag]; ok {
			if got, err := time.ParseDuration(v); err == nil && got != d.want {
				differ("kube-controller-manager runs with %s=%v, the scenario says %v", d.flag, got, d.want)
			}
		}
	}
	if v, ok := args["--horizontal-pod-autoscaler-tolerance"]; ok {
		if got, err := strconv.ParseFloat(v, 64); err == nil && got != *want.Tolerance {
			differ("kube-controller-manager runs with --horizontal-pod-autoscaler-tolerance=%g, the scenario says %g", got, *want.Tolerance)
		}
	}
	return nil
}

// metricsResolution compares metrics-server's --metric-resolution, from its
// Deployment kube-system/metrics-server, with the scenario's.
func metricsResolution(ctx context.Context, cs kubernetes.Interface, want *scenario.HPAController, differ func(string, ...any)) error {
	d, err := cs.AppsV1().Deployments("kube-system").Get(ctx, "metrics-server", metav1.GetOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		differ("metrics-server's flags are not visible (no Deployment kube-system/metrics-server): the run assumes the scenario's metricResolution %v", want.MetricResolution.Duration)
		return nil
	}
	if err != nil {
		return err
	}
	got := 60 * time.Second // metrics-server's default (cmd/metrics-server/app/options)
	if v, ok := flags(d.Spec.Template.Spec.Containers)["--metric-resolution"]; ok {
		if got, err = time.ParseDuration(v); err != nil {
			return nil
		}
	}
	if got != want.MetricResolution.Duration {
		differ("metrics-server scrapes every %v (--metric-resolution), the scenario says %v", got, want.MetricResolution.Duration)
	}
	return nil
}

// podArgs are the flags of the first kube-system pod matching selector; false
// when there is none or it may not be read.
func podArgs(ctx context.Context, cs kubernetes.Interface, selector string) (map[string]string, bool, error) {
	pods, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: selector})
	if apierrors.IsForbidden(err) {
		return nil, false, nil
	}
	if err != nil || len(pods.Items) == 0 {
		return nil, false, err
	}
	return flags(pods.Items[0].Spec.Containers), true, nil
}

// flags are the --name=value flags of the first container's command and args.
func flags(cs []corev1.Container) map[string]string {
	out := map[string]string{}
	if len(cs) == 0 {
		return out
	}
	for _, a := range append(append([]string(nil), cs[0].Command...), cs[0].Args...) {
		if name, value, ok := strings.Cut(a, "="); ok && strings.HasPrefix(name, "--") {
			out[name] = value
		}
	}
	return out
}

// loadGenerators says, for each client whose scenario gives its library CPU of its
// own (clients[].work, from `trafficlab libraries`), that the cluster's load pods
// do not spend it: they run trafficlab's own load generator, which pools and
// connects as the library does but costs what it costs. The work a request runs
// before it is sent counts in simulate's latency, so a client such as curl-loop
// answers faster here than simulate predicts.
func loadGenerators(sc *scenario.Scenario) []string {
	var out []string
	for i := range sc.Spec.Clients {
		c := &sc.Spec.Clients[i]
		var parts []string
		if w := c.Work.PerRequest; w != nil && w.Duration > 0 {
			parts = append(parts, fmt.Sprintf("%v a request before it is sent", w.Duration))
		}
		if w := c.Work.PerConnection; w != nil && w.Duration > 0 {
			parts = append(parts, fmt.Sprintf("%v a connection", w.Duration))
		}
		if w := c.Work.Steady; w != nil && !w.IsZero() {
			parts = append(parts, fmt.Sprintf("%s cores throughout", w))
		}
		if len(parts) == 0 {
			continue
		}
		library := "its library"
		if c.Library != "" {
			library = c.Library
		}
		out = append(out, fmt.Sprintf("client %s: its pods run trafficlab's own load generator, which pools and connects as %s does but does not spend the scenario's CPU for it (%s)",
			c.Name, library, strings.Join(parts, ", ")))
	}
	return out
}
