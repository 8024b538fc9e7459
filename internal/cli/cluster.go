package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"trafficlab/cluster"
	"trafficlab/cluster/manifests"
	"trafficlab/containerimage"
	"trafficlab/result"
)

type clusterFlags struct {
	runFlags
	kubeconfigFlags
	namespace         string
	image, pullPolicy string
	readyTimeout      time.Duration
	cleanup, dryRun   bool
}

func newCluster(stdout, stderr io.Writer) *cobra.Command {
	var f clusterFlags
	c := &cobra.Command{
		Use:   "cluster [FILE]",
		Short: "Run a scenario on a real Kubernetes cluster",
		Long: `cluster runs a scenario on a real Kubernetes cluster: its CNI, its kube-proxy, its
kubelets, its HPA and metrics-server. It makes a namespace of its own, tl-SCENARIO-ID,
with per service a Deployment of ` + "`trafficlab serve`" + ` pods (the scenario's service time,
readiness probe, preStop, termination grace, CPU requests and limits), its Service
(ClusterIP or headless) and its HorizontalPodAutoscaler, and per client an indexed Job
of ` + "`trafficlab load`" + ` pods. Once every service pod is ready and every load pod waits,
the load pods are released together at one start time, over kubectl attach.

The result has the same form as simulate's, with "engine": "cluster": every -o format,
--html and ` + "`trafficlab compare`" + ` work on it. The load pods stream what they measure in
their logs; their latency histograms are merged, not their percentiles averaged. With
services that call services, each service pod writes what it answered and its calls
to its log as it exits; at the end the services are ended callers first, and their
figures make the edges and the called pods' counts. Pod and Deployment changes seen
by a watch make the timeline's replicas and the scale_events, with the HPA's reason
from its events; the EndpointSlices' make its ready endpoints. The service pods' and
nodes' CPU figures are the kubelets' (their Summary API, through the API server's node
proxy), read every second; a load pod's is what its generator says it spent.

What the cluster decides otherwise than the scenario is said before the run and kept
in the result (cluster.differences): kube-proxy's mode and minSyncPeriod from its
ConfigMap, kube-controller-manager's HPA flags and metrics-server's resolution where
the cluster shows them, a missing metrics API, and each client library's own CPU
(clients[].work) that the load pods do not spend: they run trafficlab's load
generator, which pools and connects as the library does. So is each input the engine
does not carry out: the cluster's own network carries the traffic (no latency, jitter,
bandwidth or loss is added), and no fault is injected, no background workload run, no
sidecar proxy put beside a pod. A rollout (services[].rollouts) is started at its
time as kubectl rollout restart starts one. Pods are placed by the cluster's
scheduler: a scenario's nodeSelector, affinity and tolerations go into the pods as
they are, and trafficlab never changes a node; before the run, the scheduler every
engine shares places the run's pods on the cluster's nodes (their labels, taints and
allocatable CPU, taken as empty), and each pod that fits none is said.

The pods run trafficlab's own image, which must be of this version (trafficlab
image makes it; the run refuses pods of another). By default the image is
trafficlab.local/trafficlab:VERSION, loaded onto the nodes (imagePullPolicy Never).

The namespace is deleted at the end, on an error and on Ctrl-C (the load pods are
stopped first and report what ran). --cleanup deletes what a killed run left, by
label. It needs, in its namespace: create and delete on namespaces, deployments,
services, horizontalpodautoscalers and jobs; patch on deployments, for rollouts; get,
list and watch on pods, deployments, endpointslices and events; pods/log and
pods/attach; list on nodes, and get on nodes/proxy for the CPU figures.`,
		Example: `  trafficlab image -o trafficlab-image.tar && ctr -n k8s.io images import trafficlab-image.tar
  trafficlab cluster examples/r1-curl-loop.yaml --duration 20s
  trafficlab cluster examples/r1-curl-loop.yaml --context staging -o json > cluster.json
  trafficlab simulate examples/r1-curl-loop.yaml -o json > sim.json
  trafficlab compare sim.json cluster.json
  trafficlab cluster examples/r1-curl-loop.yaml --dry-run -o yaml > objects.yaml
  trafficlab cluster --cleanup`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runCluster(c, args, &f, stdout, stderr)
		},
	}
	f.runFlags.register(c)
	f.kubeconfigFlags.register(c)
	fl := c.Flags()
	fl.StringVarP(&f.namespace, "namespace", "n", "", "run in this existing namespace, deleting only the run's objects at the end\n(default: a namespace of the run's own, tl-SCENARIO-ID)")
	fl.StringVar(&f.image, "image", "", "trafficlab's image as the nodes reach it (default: trafficlab.local/trafficlab:VERSION)")
	fl.StringVar(&f.pullPolicy, "pull-policy", "", "the pods' imagePullPolicy: Never, IfNotPresent or Always\n(default: Never for the default image, loaded onto the nodes; else IfNotPresent)")
	fl.DurationVar(&f.readyTimeout, "ready-timeout", 3*time.Minute, "how long to wait for the pods to be scheduled, pull the image and become ready")
	fl.BoolVar(&f.cleanup, "cleanup", false, "delete what killed runs left (namespaces and objects labelled app.kubernetes.io/managed-by=trafficlab) and exit")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the run's objects as YAML (-o yaml) instead of running it; needs no cluster")
	return c
}

// runCluster prints a run's objects for --dry-run, deletes leftovers for
// --cleanup, or runs the scenario on the cluster and writes what it measured.
func runCluster(c *cobra.Command, args []string, f *clusterFlags, stdout, stderr io.Writer) error {
	if f.cleanup {
		if len(args) > 0 {
			return badUsage(c, errors.New("--cleanup takes no FILE"))
		}
		return runClusterCleanup(c, f, stdout)
	}
	if f.dryRun && c.Flags().Changed("output") && f.output != "yaml" {
		return badInput{fmt.Errorf("-o %q: --dry-run prints YAML (-o yaml)", f.output)}
	}
	if !f.dryRun && f.output == "yaml" {
		return badInput{errors.New("-o yaml prints the run's objects: give --dry-run too")}
	}
	var render func(io.Writer, *result.Result) error
	if !f.dryRun {
		var err error
		if render, err = renderer(f.output); err != nil {
			return err
		}
	}
	if c.Flags().Changed("requests") {
		return badInput{errors.New("--requests: the cluster engine does not record single requests; use simulate --requests")}
	}
	image, policy, err := f.imageAndPolicy()
	if err != nil {
		return err
	}
	src, err := readSource(args)
	if err != nil {
		return err
	}
	sc, _, err := f.load(c, src, stderr)
	if err != nil {
		return err
	}
	if f.dryRun {
		objs, warnings, err := manifests.Build(sc, manifests.Run{ID: cluster.NewID(), Image: image, PullPolicy: policy, InNamespace: f.namespace})
		if err != nil {
			return badInput{err}
		}
		for _, w := range warnings {
			fmt.Fprintf(stderr, "cluster: %s\n", w)
		}
		return objs.WriteYAML(stdout)
	}
	cfg, err := f.restConfig()
	if err != nil {
		return err
	}
	ctx, stop := interruptible(c.Context())
	defer stop()
	bar := newProgress(stderr, f.quiet)
	r, err := cluster.Run(ctx, sc, cluster.Options{
		Config: cfg, Namespace: f.namespace, Image: image, PullPolicy: policy, Version: buildVersion(),
		ReadyTimeout: f.readyTimeout, Log: bar.log(),
		Progress: func(done, total time.Duration) {
			bar.update(done, total, -1, fmt.Sprintf("%s of %s on the cluster", done.Round(time.Second), total.Round(time.Second)))
		},
	})
	bar.done()
	if r != nil {
		r.Origin = f.origin(c, args)
	}
	return f.end(ctx, c, stdout, src, r, err, sc.Spec.Duration.Duration, render)
}

// imageAndPolicy are the pods' image and pull policy from the flags.
func (f *clusterFlags) imageAndPolicy() (string, corev1.PullPolicy, error) {
	image := f.image
	policy := corev1.PullPolicy(f.pullPolicy)
	if image == "" {
		ref, err := containerimage.Ref(buildVersion())
		if err != nil {
			return "", "", err
		}
		image = ref.String()
		if policy == "" {
			policy = corev1.PullNever
		}
	}
	if policy == "" {
		policy = corev1.PullIfNotPresent
	}
	switch policy {
	case corev1.PullNever, corev1.PullIfNotPresent, corev1.PullAlways:
		return image, policy, nil
	}
	return "", "", badInput{fmt.Errorf("--pull-policy %q: want Never, IfNotPresent or Always", f.pullPolicy)}
}

// kubeconfigFlags choose a cluster as kubectl does.
type kubeconfigFlags struct{ kubeconfig, context string }

func (f *kubeconfigFlags) register(c *cobra.Command) {
	c.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	c.Flags().StringVar(&f.context, "context", "", "the kubeconfig context to use (default: its current context)")
}

// clientConfig is the kubeconfig as kubectl loads it, with --context applied.
func (f *kubeconfigFlags) clientConfig() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.kubeconfig
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: f.context})
}

// restConfig is the API server's address and credentials, as kubectl finds them.
func (f *kubeconfigFlags) restConfig() (*rest.Config, error) {
	cfg, err := f.clientConfig().ClientConfig()
	if err != nil {
		return nil, badKubeconfig(err)
	}
	return cfg, nil
}

func badKubeconfig(err error) error { return badInput{fmt.Errorf("the cluster's kubeconfig: %w", err)} }

// runClusterCleanup deletes the namespaces and objects runs left, by label.
func runClusterCleanup(c *cobra.Command, f *clusterFlags, stdout io.Writer) error {
	cfg, err := f.restConfig()
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.Context(), time.Minute)
	defer cancel()
	deleted, err := cluster.Cleanup(ctx, cs, f.namespace)
	for _, d := range deleted {
		fmt.Fprintf(stdout, "deleted %s\n", d)
	}
	if len(deleted) == 0 && err == nil {
		fmt.Fprintln(stdout, "nothing to clean up")
	}
	return err
}
