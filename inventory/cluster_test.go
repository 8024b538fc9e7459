package inventory

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// A cluster's objects are read with list and get alone, typed as from files;
// a forbidden cluster-wide read is recorded, and Istio's absence is no error.
func TestReadCluster(t *testing.T) {
	two := int32(2)
	cs := fake.NewClientset(
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "cart", Namespace: "shop"}, Spec: appsv1.DeploymentSpec{Replicas: &two}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "elsewhere"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "cart", Namespace: "shop"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"istio-injection": "enabled"}}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy", Namespace: "kube-system"}, Data: map[string]string{"config.conf": "mode: nftables"}},
	)
	var verbs []string
	cs.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		verbs = append(verbs, a.GetVerb())
		return false, nil, nil
	})
	cs.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "", nil)
	})
	rule := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule",
		"metadata": map[string]any{"name": "cart", "namespace": "shop"}, "spec": map[string]any{"host": "cart"}}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{destinationRules: "DestinationRuleList"}, rule)

	var inv Inventory
	if err := inv.ReadCluster(context.Background(), cs, dyn, "prod", "shop"); err != nil {
		t.Fatal(err)
	}
	if len(inv.Deployments) != 1 || inv.Deployments[0].Object.Name != "cart" || *inv.Deployments[0].Object.Spec.Replicas != 2 {
		t.Errorf("deployments %+v", inv.Deployments)
	}
	if len(inv.Services) != 1 || len(inv.Namespaces) != 1 || inv.Namespaces[0].Object.Labels["istio-injection"] != "enabled" {
		t.Errorf("services %d, namespaces %+v", len(inv.Services), inv.Namespaces)
	}
	if len(inv.ConfigMaps) != 1 || inv.ConfigMaps[0].Object.Data["config.conf"] != "mode: nftables" {
		t.Errorf("configmaps %+v", inv.ConfigMaps)
	}
	if len(inv.DestinationRules) != 1 || inv.DestinationRules[0].Object.Spec.Host != "cart" {
		t.Errorf("destination rules %+v", inv.DestinationRules)
	}
	if got := inv.Deployments[0].Source.String(); got != "prod" {
		t.Errorf("source %q, want the cluster's name", got)
	}
	if len(inv.Unread) != 1 || !strings.HasPrefix(inv.Unread[0], "Node: ") {
		t.Errorf("unread %q, want the Nodes", inv.Unread)
	}
	for _, v := range verbs {
		if v != "list" && v != "get" {
			t.Errorf("asked the API server to %s", v)
		}
	}

	// Without Istio, the API server does not know the resource: the rules are none.
	noIstio := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{destinationRules: "DestinationRuleList"})
	noIstio.PrependReactor("list", "destinationrules", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(destinationRules.GroupResource(), "")
	})
	var bare Inventory
	if err := bare.ReadCluster(context.Background(), fake.NewClientset(), noIstio, "prod", ""); err != nil {
		t.Fatalf("a cluster without Istio: %v", err)
	}
}
