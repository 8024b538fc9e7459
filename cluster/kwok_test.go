package cluster_test

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
	"trafficlab/internal/localcluster"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"trafficlab/cluster"
	"trafficlab/cluster/manifests"
	"trafficlab/scenario"
)

// kwokPlacement's pools are fake nodes that kwok keeps (hack/localcluster.sh runs
// it for the nodes annotated kwok.x-k8s.io/node=fake): two of 1 core for web,
// whose 400m pods fit two a node, so one of five waits; one of 4 cores tainted
// for db, whose two 1500m pods tolerate the taint; cache asks for that node
// without tolerating it, and waits. spread's three pods must keep their
// hostnames level (maxSkew 1) over the kwok nodes: the tainted node, which they
// do not tolerate, still counts as a domain of none (nodeTaintsPolicy Ignore),
// so each small node takes one and the third waits.
const kwokPlacement = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: kwok-placement}
spec:
  duration: 1s
  cluster:
    nodes:
    - {name: small, count: 2, cpu: "1", labels: {trafficlab.io/kwok-pool: small}}
    - name: big
      count: 1
      cpu: "4"
      labels: {trafficlab.io/kwok-pool: big}
      taints: [{key: dedicated, value: big, effect: NoSchedule}]
  services:
  - name: web
    replicas: 5
    pod:
      resources: {requests: {cpu: 400m}}
      nodeSelector: {trafficlab.io/kwok-pool: small}
      serviceTime: {distribution: constant, value: 1ms}
  - name: db
    replicas: 2
    pod:
      resources: {requests: {cpu: 1500m}}
      nodeSelector: {trafficlab.io/kwok-pool: big}
      tolerations: [{key: dedicated, operator: Equal, value: big, effect: NoSchedule}]
      serviceTime: {distribution: constant, value: 1ms}
  - name: cache
    replicas: 1
    pod:
      resources: {requests: {cpu: 100m}}
      nodeSelector: {trafficlab.io/kwok-pool: big}
      serviceTime: {distribution: constant, value: 1ms}
  - name: spread
    replicas: 3
    pod:
      resources: {requests: {cpu: 50m}}
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms: [{matchExpressions: [{key: trafficlab.io/kwok-pool, operator: Exists}]}]
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: spread}}}
      serviceTime: {distribution: constant, value: 1ms}
  clients:
  - {name: caller, target: web, threads: 1}
`

// kwokPods is kwok's --cidr in hack/localcluster.sh.
var kwokPods = netip.MustParsePrefix("198.19.96.0/19")

// TestPlacementOnTheLocalCluster needs only the control plane: on fake nodes made
// from the scenario's pools, the real kube-scheduler places the services' pods
// (their Deployments as the cluster engine makes them), and the pods it cannot
// place are those that Fit, the scheduler every engine shares run over the
// cluster's nodes, says fit no node, and those simulate leaves pending. kwok runs
// the placed pods, with addresses from its range.
func TestPlacementOnTheLocalCluster(t *testing.T) {
	_, cs := localcluster.Client(t)
	sc, _, diags := scenario.Load("kwok-placement.yaml", []byte(kwokPlacement), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fakeNodes(ctx, t, cs, sc)
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	predicted := map[string]int{} // pods that fit no node, by service
	for _, s := range cluster.Fit(nodes.Items, sc) {
		var service string
		var n, of int
		if _, err := fmt.Sscanf(s, "service %s %d of %d", &service, &n, &of); err == nil {
			predicted[strings.TrimSuffix(service, ":")] = n
		}
	}
	left := map[string]int{}
	for _, p := range simulated(t, sc).Pending {
		left[p.Service]++
	}

	o, _, err := manifests.Build(sc, manifests.Run{ID: fmt.Sprintf("k%d", time.Now().Unix()%100000), Image: "trafficlab.local/trafficlab:unused", PullPolicy: corev1.PullNever})
	if err != nil {
		t.Fatal(err)
	}
	ns := o.Namespace.Name
	if _, err := cs.CoreV1().Namespaces().Create(ctx, o.Namespace, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The namespace goes before the nodes (cleanups run last first): kwok confirms
	// its pods' deletion only while their nodes are there.
	t.Cleanup(func() {
		gone, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = cs.CoreV1().Namespaces().Delete(gone, ns, metav1.DeleteOptions{})
		until(gone, t, "the namespace gone", func() (bool, error) {
			_, err := cs.CoreV1().Namespaces().Get(gone, ns, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
	})
	for _, d := range o.Deployments {
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Settled: every pod either runs on a node, with an address of kwok's, or is
	// one the scheduler called unschedulable.
	replicas := 0
	for _, s := range sc.Spec.Services {
		replicas += s.Replicas
	}
	var waiting map[string]int
	until(ctx, t, "every pod running or unschedulable", func() (bool, error) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		waiting = map[string]int{}
		settled := 0
		for _, p := range pods.Items {
			if unschedulable(&p) {
				waiting[p.Labels["app"]]++
				settled++
			} else if ip, err := netip.ParseAddr(p.Status.PodIP); err == nil && p.Status.Phase == corev1.PodRunning && kwokPods.Contains(ip) {
				settled++
			}
		}
		return settled == replicas && len(pods.Items) == replicas, nil
	})
	want := map[string]int{"web": 1, "cache": 1, "spread": 1}
	for _, got := range []struct {
		name   string
		counts map[string]int
	}{{"kube-scheduler", waiting}, {"Fit", predicted}, {"simulate", left}} {
		if fmt.Sprint(got.counts) != fmt.Sprint(want) {
			t.Errorf("%s leaves %v pods unplaced, want %v", got.name, got.counts, want)
		}
	}
}

// unschedulable says the scheduler found no node for p.
func unschedulable(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
		return c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
	})
}

// fakeNodes makes a node that kwok keeps for each node of sc's pools, with the
// pool's labels, taints and CPU, waits until kwok has made them Ready, and
// deletes them when the test ends. A Node's status may be written when it is
// made (pkg/registry/core/node/strategy.go keeps it), which is how kwok's own
// examples give their nodes capacity.
func fakeNodes(ctx context.Context, t *testing.T, cs kubernetes.Interface, sc *scenario.Scenario) {
	t.Helper()
	var names []string
	t.Cleanup(func() {
		for _, n := range names {
			_ = cs.CoreV1().Nodes().Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})
	for _, pool := range sc.Spec.Cluster.Nodes {
		for i := range pool.Count {
			name := fmt.Sprintf("kwok-%s-%d", pool.Name, i)
			labels := map[string]string{"kubernetes.io/hostname": name, "type": "kwok"}
			for k, v := range pool.Labels {
				labels[k] = v
			}
			capacity := corev1.ResourceList{corev1.ResourceCPU: *pool.CPU, corev1.ResourceMemory: resource.MustParse("64Gi"),
				corev1.ResourcePods: resource.MustParse("110")}
			n := &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}},
				Spec:       corev1.NodeSpec{Taints: pool.Taints},
				Status:     corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
			}
			if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			names = append(names, name)
		}
	}
	// Ready, and without the not-ready taint that the node lifecycle controller
	// puts on a new node and takes off a moment after it is Ready
	// (pkg/controller/nodelifecycle): Fit, as the scheduler, heeds taints.
	until(ctx, t, "kwok's nodes Ready and untainted", func() (bool, error) {
		for _, name := range names {
			n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil || !slices.ContainsFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool {
				return c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
			}) || slices.ContainsFunc(n.Spec.Taints, func(c corev1.Taint) bool { return strings.HasPrefix(c.Key, "node.kubernetes.io/") }) {
				return false, err
			}
		}
		return true, nil
	})
}
