package scenario

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// meshProxies are the containers a service mesh injects, never the app.
var meshProxies = []string{"istio-proxy", "linkerd-proxy"}

// MeshProxy tells whether a container of this name is a mesh's proxy.
func MeshProxy(container string) bool { return slices.Contains(meshProxies, container) }

// AppContainer is the index of the app container in p.Containers: the one
// p.App names, else the only one that is not a mesh's proxy; -1 with the
// reason when there is none, or no telling which.
func (p *Pod) AppContainer() (int, error) {
	if p.App != "" {
		i := slices.IndexFunc(p.Containers, func(c corev1.Container) bool { return c.Name == p.App })
		if i < 0 {
			return -1, fmt.Errorf("names no container of containers")
		}
		return i, nil
	}
	app := -1
	for i := range p.Containers {
		if MeshProxy(p.Containers[i].Name) {
			continue
		}
		if app >= 0 {
			return -1, fmt.Errorf("containers %s and %s could each be the app: name it with app", p.Containers[app].Name, p.Containers[i].Name)
		}
		app = i
	}
	if app < 0 {
		return -1, fmt.Errorf("containers has no app container, only a mesh's proxy")
	}
	return app, nil
}

// fromAppContainer fills the pod-level keys the app container sets and the
// pod leaves out: resources, readinessProbe, the preStop hook.
func fromAppContainer(p *Pod) {
	i, err := p.AppContainer()
	if len(p.Containers) == 0 || err != nil {
		return // validation says why
	}
	c := &p.Containers[i]
	if equality.Semantic.DeepEqual(p.Resources, corev1.ResourceRequirements{}) {
		p.Resources = *c.Resources.DeepCopy()
	}
	if r := c.ReadinessProbe; r != nil && p.ReadinessProbe == nil {
		p.ReadinessProbe = &Probe{
			HTTPGet: r.HTTPGet, TCPSocket: r.TCPSocket, Exec: r.Exec, GRPC: r.GRPC,
			InitialDelaySeconds: r.InitialDelaySeconds,
			PeriodSeconds:       setOrNil(r.PeriodSeconds), TimeoutSeconds: setOrNil(r.TimeoutSeconds),
			SuccessThreshold: setOrNil(r.SuccessThreshold), FailureThreshold: setOrNil(r.FailureThreshold),
		}
	}
	if l := c.Lifecycle; l != nil && l.PreStop != nil && p.Lifecycle == nil {
		switch h := l.PreStop; {
		case h.Sleep != nil:
			p.Lifecycle = &Lifecycle{PreStop: &LifecycleHandler{Sleep: &SleepAction{Seconds: h.Sleep.Seconds}}}
		case h.Exec != nil:
			p.Lifecycle = &Lifecycle{PreStop: &LifecycleHandler{Exec: &ExecAction{Command: h.Exec.Command}}}
		}
	}
}

// setOrNil is a probe field that Kubernetes reads as unset when 0.
func setOrNil(v int32) *int32 {
	if v == 0 {
		return nil
	}
	return &v
}

// containers checks a pod's container list: an app container to take, each
// key set in one place, and what is not modelled.
func (v *validator) containers(path string, p *Pod) {
	if len(p.Containers) == 0 {
		if p.App != "" {
			v.errorf(path+".app", "names the app container, with containers only")
		}
		return
	}
	app, err := p.AppContainer()
	if err != nil {
		at := path + ".containers"
		if p.App != "" {
			at = path + ".app"
		}
		v.errorf(at, "%v", err)
		return
	}
	c := &p.Containers[app]
	at := fmt.Sprintf("%s.containers[%d]", path, app)
	for _, k := range []struct {
		key      string
		inApp    bool
		podLevel string
	}{
		{"resources", len(c.Resources.Requests)+len(c.Resources.Limits) > 0, "resources"},
		{"resources.limits.cpu", !c.Resources.Limits.Cpu().IsZero(), "cpu"},
		{"readinessProbe", c.ReadinessProbe != nil, "readinessProbe"},
		{"lifecycle.preStop", c.Lifecycle != nil && c.Lifecycle.PreStop != nil, "lifecycle"},
	} {
		if k.inApp && v.written(path+"."+k.podLevel) {
			v.errorf(path+"."+k.podLevel, "is set in the app container too (%s.%s): set it in one place", at, k.key)
		}
	}
	if h := c.Lifecycle; h != nil && h.PreStop != nil && h.PreStop.Sleep == nil && h.PreStop.Exec == nil {
		v.warnf(at+".lifecycle.preStop", "an HTTP or TCP hook is not modelled: the pod stops without it")
	}
	for i := range p.Containers {
		if i == app {
			continue
		}
		name := p.Containers[i].Name
		why := "only the app container is modelled: its CPU is neither requested nor spent"
		if MeshProxy(name) {
			why = "a mesh's proxy is modelled by the service's sidecar key, not as a container"
		}
		v.warnf(fmt.Sprintf("%s.containers[%d]", path, i), "%s: %s", name, why)
	}
}
