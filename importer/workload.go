package importer

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"trafficlab/inventory"
	"trafficlab/scenario"
)

// workload is a Deployment, StatefulSet or Job: pods from one template.
type workload struct {
	kind, namespace, name string
	replicas              *int32
	template              *corev1.PodTemplateSpec
	// strategy and minReadySeconds are a Deployment's.
	strategy        *appsv1.DeploymentStrategy
	minReadySeconds int32
	source          inventory.Source

	// service is the Service in front of its pods; nil for a workload that only
	// calls others (a load generator).
	service *corev1.Service
	// as is its name in the scenario: its Service's, or its own for a client.
	as string
}

func (w *workload) String() string { return fmt.Sprintf("%s %s/%s", w.kind, w.namespace, w.name) }

// workloads lists the inventory's Deployments, StatefulSets and Jobs, in that
// order, each in the order read.
func workloads(inv *inventory.Inventory) []*workload {
	var out []*workload
	for _, d := range inv.Deployments {
		o := d.Object
		out = append(out, &workload{kind: "Deployment", namespace: namespaceOf(o.Namespace), name: o.Name, replicas: o.Spec.Replicas,
			template: &o.Spec.Template, strategy: &o.Spec.Strategy, minReadySeconds: o.Spec.MinReadySeconds, source: d.Source})
	}
	for _, s := range inv.StatefulSets {
		o := s.Object
		out = append(out, &workload{kind: "StatefulSet", namespace: namespaceOf(o.Namespace), name: o.Name, replicas: o.Spec.Replicas,
			template: &o.Spec.Template, minReadySeconds: o.Spec.MinReadySeconds, source: s.Source})
	}
	for _, j := range inv.Jobs {
		o := j.Object
		out = append(out, &workload{kind: "Job", namespace: namespaceOf(o.Namespace), name: o.Name, replicas: o.Spec.Parallelism,
			template: &o.Spec.Template, source: j.Source})
	}
	return out
}

// namespaceOf is an object's namespace; one a manifest leaves out is the one
// kubectl applies it to, taken as default.
func namespaceOf(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

// selects tells whether the Service's selector picks the workload's pods, as
// the EndpointSlice controller matches them (a Service with no selector picks
// none).
func selects(s *corev1.Service, w *workload) bool {
	if len(s.Spec.Selector) == 0 || namespaceOf(s.Namespace) != w.namespace {
		return false
	}
	return labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(w.template.Labels))
}

// appContainer is the container that serves the Service: the only one that is
// not a mesh's proxy, or the one that listens on the Service's target port.
// why says how it was chosen when the pod has several.
func appContainer(w *workload) (c *corev1.Container, why string) {
	var apps []*corev1.Container
	for i := range w.template.Spec.Containers {
		if c := &w.template.Spec.Containers[i]; !scenario.MeshProxy(c.Name) {
			apps = append(apps, c)
		}
	}
	switch {
	case len(apps) == 0:
		return nil, ""
	case len(apps) == 1:
		return apps[0], ""
	}
	names := make([]string, len(apps))
	for i, c := range apps {
		names[i] = c.Name
	}
	if w.service != nil {
		for _, c := range apps {
			for _, sp := range w.service.Spec.Ports {
				if servesPort(c, sp.TargetPort, sp.Port) {
					return c, fmt.Sprintf("the pod has containers %s; %s is taken as the app, as it listens on the Service's port %s", strings.Join(names, ", "), c.Name, sp.TargetPort.String())
				}
			}
		}
	}
	return apps[0], fmt.Sprintf("the pod has containers %s; %s, the first, is taken as the app", strings.Join(names, ", "), apps[0].Name)
}

// servesPort tells whether c declares the target port (a number, or a port's
// name); a target port left out is the Service's port.
func servesPort(c *corev1.Container, target intstr.IntOrString, port int32) bool {
	for _, p := range c.Ports {
		switch {
		case target.Type == intstr.String && target.StrVal != "" && p.Name == target.StrVal:
			return true
		case target.Type == intstr.Int && target.IntVal != 0 && p.ContainerPort == target.IntVal:
			return true
		case target.Type == intstr.Int && target.IntVal == 0 && p.ContainerPort == port:
			return true
		}
	}
	return false
}

// grpcPort tells whether the Service's port speaks gRPC, as its name or
// appProtocol says (Istio's protocol selection reads the same).
func grpcPort(p corev1.ServicePort) bool {
	if p.AppProtocol != nil && (*p.AppProtocol == "grpc" || strings.HasPrefix(*p.AppProtocol, "grpc")) {
		return true
	}
	return p.Name == "grpc" || strings.HasPrefix(p.Name, "grpc-")
}
