package inventory

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// Access is what reading a cluster asks of its API server: get and list, on
// these resources, nothing else. Nodes, Namespaces and the kube-system
// ConfigMap are read when allowed and listed under Unread when not.
var Access = []string{
	"apps: deployments, statefulsets",
	"batch: jobs",
	"core: services, configmaps, nodes, namespaces",
	"autoscaling: horizontalpodautoscalers",
	"policy: poddisruptionbudgets",
	"networking.istio.io: destinationrules (when Istio is installed)",
}

// destinationRules is Istio's resource; v1 is served from Istio 1.22.
var destinationRules = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "destinationrules"}

// ReadCluster reads, with get and list only, the objects an import keeps from
// a cluster's API server, in namespace (all of them when ""), and the cluster's
// Nodes and kube-proxy ConfigMap. name names the cluster in every object's
// Source. What the server forbids of the cluster-wide reads is recorded in
// Unread; a forbidden namespaced read is an error, naming the access needed.
func (inv *Inventory) ReadCluster(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, name, namespace string) error {
	src := Source{File: name, Item: -1}
	type lister struct {
		kind, apiVersion string
		list             func() (runtime.Object, error)
		optional         bool
	}
	opts := metav1.ListOptions{}
	listers := []lister{
		{"Deployment", "apps/v1", func() (runtime.Object, error) { return cs.AppsV1().Deployments(namespace).List(ctx, opts) }, false},
		{"StatefulSet", "apps/v1", func() (runtime.Object, error) { return cs.AppsV1().StatefulSets(namespace).List(ctx, opts) }, false},
		{"Job", "batch/v1", func() (runtime.Object, error) { return cs.BatchV1().Jobs(namespace).List(ctx, opts) }, false},
		{"Service", "v1", func() (runtime.Object, error) { return cs.CoreV1().Services(namespace).List(ctx, opts) }, false},
		{"ConfigMap", "v1", func() (runtime.Object, error) { return cs.CoreV1().ConfigMaps(namespace).List(ctx, opts) }, false},
		{"HorizontalPodAutoscaler", "autoscaling/v2", func() (runtime.Object, error) {
			return cs.AutoscalingV2().HorizontalPodAutoscalers(namespace).List(ctx, opts)
		}, false},
		{"PodDisruptionBudget", "policy/v1", func() (runtime.Object, error) { return cs.PolicyV1().PodDisruptionBudgets(namespace).List(ctx, opts) }, false},
		{"Node", "v1", func() (runtime.Object, error) { return cs.CoreV1().Nodes().List(ctx, opts) }, true},
		{"Namespace", "v1", func() (runtime.Object, error) {
			if namespace == "" {
				return cs.CoreV1().Namespaces().List(ctx, opts)
			}
			ns, err := cs.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
			return listOf(ns, err)
		}, true},
		{"DestinationRule", "networking.istio.io/v1", func() (runtime.Object, error) {
			return dyn.Resource(destinationRules).Namespace(namespace).List(ctx, opts)
		}, true},
	}
	if namespace != "" && namespace != "kube-system" {
		// kube-proxy's configuration, which kubeadm keeps in kube-system.
		listers = append(listers, lister{"ConfigMap", "v1", func() (runtime.Object, error) {
			return listOf(cs.CoreV1().ConfigMaps("kube-system").Get(ctx, "kube-proxy", metav1.GetOptions{}))
		}, true})
	}
	for _, l := range listers {
		list, err := l.list()
		switch {
		case err == nil:
		case apierrors.IsNotFound(err):
			continue // no kube-proxy ConfigMap, or no Istio
		case l.optional && apierrors.IsForbidden(err):
			inv.Unread = append(inv.Unread, fmt.Sprintf("%s: %v", l.kind, err))
			continue
		default:
			return fmt.Errorf("list %ss: %w", l.kind, err)
		}
		items, err := rawItems(list)
		if err != nil {
			return err
		}
		for _, item := range items {
			if err := inv.add(withType(item, l.apiVersion, l.kind), src); err != nil {
				return err
			}
		}
	}
	return nil
}

// listOf is one object got as a list of it.
func listOf(obj runtime.Object, err error) (runtime.Object, error) {
	if err != nil {
		return nil, err
	}
	return &metav1.List{Items: []runtime.RawExtension{{Object: obj}}}, nil
}

// rawItems are a list's items as JSON, whatever kind of list it is.
func rawItems(list runtime.Object) ([]json.RawMessage, error) {
	data, err := json.Marshal(list)
	if err != nil {
		return nil, err
	}
	var l struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, err
	}
	return l.Items, nil
}

// withType sets an item's apiVersion and kind, which a typed list leaves out.
func withType(item json.RawMessage, apiVersion, kind string) []byte {
	var obj map[string]any
	if err := json.Unmarshal(item, &obj); err != nil {
		return item
	}
	obj["apiVersion"], obj["kind"] = apiVersion, kind
	out, err := json.Marshal(obj)
	if err != nil {
		return item
	}
	return out
}
