package cluster

import (
	"context"
	"errors"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"trafficlab/cluster/manifests"
)

// Cleanup deletes what runs left: every namespace labelled as trafficlab's, and
// in namespace ns (every namespace when "") the objects so labelled. It names
// what it deleted.
func Cleanup(ctx context.Context, cs kubernetes.Interface, ns string) ([]string, error) {
	managed := metav1.ListOptions{LabelSelector: manifests.ManagedByLabel + "=" + manifests.ManagedBy}
	var deleted []string
	var errs []error
	namespaces, err := cs.CoreV1().Namespaces().List(ctx, managed)
	if err != nil {
		return nil, err
	}
	for _, n := range namespaces.Items {
		if n.DeletionTimestamp != nil {
			continue // already going
		}
		if err := cs.CoreV1().Namespaces().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil {
			errs = append(errs, err)
			continue
		}
		deleted = append(deleted, "namespace "+n.Name)
	}
	// Runs in an existing namespace left their objects there.
	deployments, err := cs.AppsV1().Deployments(ns).List(ctx, managed)
	if err != nil {
		return deleted, errors.Join(append(errs, err)...)
	}
	seen := map[string]bool{}
	for _, d := range deployments.Items {
		run := d.Labels[manifests.RunLabel]
		if seen[d.Namespace+"/"+run] || slices.ContainsFunc(namespaces.Items, func(n corev1.Namespace) bool { return n.Name == d.Namespace }) {
			continue
		}
		seen[d.Namespace+"/"+run] = true
		if err := DeleteLabelled(ctx, cs, d.Namespace, manifests.RunLabel+"="+run); err != nil {
			errs = append(errs, err)
			continue
		}
		deleted = append(deleted, "run "+run+" in namespace "+d.Namespace)
	}
	return deleted, errors.Join(errs...)
}

// DeleteLabelled deletes the objects of namespace ns matching selector that a run
// makes (Jobs, HorizontalPodAutoscalers, Services, Deployments), with their pods.
func DeleteLabelled(ctx context.Context, cs kubernetes.Interface, ns, selector string) error {
	all := metav1.ListOptions{LabelSelector: selector}
	background := metav1.DeletePropagationBackground
	del := metav1.DeleteOptions{PropagationPolicy: &background}
	return errors.Join(
		cs.BatchV1().Jobs(ns).DeleteCollection(ctx, del, all),
		cs.AutoscalingV2().HorizontalPodAutoscalers(ns).DeleteCollection(ctx, del, all),
		deleteServices(ctx, cs, ns, all),
		cs.AppsV1().Deployments(ns).DeleteCollection(ctx, del, all),
		cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, all),
	)
}

// deleteServices deletes the matching Services one by one: the API has no
// deletecollection for them.
func deleteServices(ctx context.Context, cs kubernetes.Interface, ns string, sel metav1.ListOptions) error {
	list, err := cs.CoreV1().Services(ns).List(ctx, sel)
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range list.Items {
		errs = append(errs, cs.CoreV1().Services(ns).Delete(ctx, s.Name, metav1.DeleteOptions{}))
	}
	return errors.Join(errs...)
}
