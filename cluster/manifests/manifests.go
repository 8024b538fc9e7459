// Package manifests turns a scenario into the Kubernetes objects the cluster
// engine applies for one run: a namespace of its own; per service a Deployment of
// `trafficlab serve` pods and its Service (a ClusterIP, or headless) and
// HorizontalPodAutoscaler; per client an indexed Job of `trafficlab load` pods that
// wait on stdin for the run's start time. Every object carries the run's labels, so
// that a killed run's leftovers can be found and deleted.
package manifests

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"trafficlab/containerimage"
	"trafficlab/scenario"
)

// Labels every object of a run carries.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "trafficlab"
	RunLabel       = "trafficlab.io/run"
)

// Ports: every pod's app listens on PodPort, every ClusterIP on ServicePort, as in
// emulate.
const (
	PodPort     = 8080
	ServicePort = 80
)

// Run is one run's identity and the image its pods run.
type Run struct {
	// ID is unique per run: a DNS label's worth of lower-case letters and digits.
	ID string
	// Image is the trafficlab image's reference; PullPolicy Never for an image
	// loaded onto the nodes, IfNotPresent for one pushed to a registry.
	Image      string
	PullPolicy corev1.PullPolicy
	// InNamespace runs it in this existing namespace rather than one of its own.
	InNamespace string
}

// Namespace is the run's namespace: InNamespace, or else tl-SCENARIO-ID cut to a
// DNS label's 63 characters.
func (r Run) Namespace(sc *scenario.Scenario) string {
	if r.InNamespace != "" {
		return r.InNamespace
	}
	name := "tl-" + sc.Metadata.Name
	return strings.TrimRight(name[:min(len(name), 63-len(r.ID)-1)], "-") + "-" + r.ID
}

// Labels are the labels of every object of the run.
func (r Run) Labels() map[string]string {
	return map[string]string{ManagedByLabel: ManagedBy, RunLabel: r.ID}
}

// Objects are a run's objects, in the order they are applied.
type Objects struct {
	// Namespace is the run's own, nil when it runs in an existing one.
	Namespace   *corev1.Namespace
	Deployments []*appsv1.Deployment
	Services    []*corev1.Service
	HPAs        []*autoscalingv2.HorizontalPodAutoscaler
	Jobs        []*batchv1.Job
}

// Build makes run's objects for sc, a scenario loaded with its defaults. Warnings
// say what the cluster runs differently from the scenario.
func Build(sc *scenario.Scenario, run Run) (*Objects, []string, error) {
	ns := run.Namespace(sc)
	o := &Objects{}
	if run.InNamespace == "" {
		o.Namespace = &corev1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: run.Labels()},
		}
	}
	var warnings []string
	for i := range sc.Spec.Services {
		s := &sc.Spec.Services[i]
		d, warn, err := deployment(sc, s, run, ns)
		if err != nil {
			return nil, nil, fmt.Errorf("spec.services[%d]: %w", i, err)
		}
		warnings = append(warnings, warn...)
		o.Deployments = append(o.Deployments, d)
		o.Services = append(o.Services, service(s, run, ns))
		if s.Autoscaler != nil {
			o.HPAs = append(o.HPAs, hpa(s, run, ns))
		}
	}
	for i := range sc.Spec.Clients {
		j, err := job(sc, &sc.Spec.Clients[i], run, ns)
		if err != nil {
			return nil, nil, fmt.Errorf("spec.clients[%d]: %w", i, err)
		}
		o.Jobs = append(o.Jobs, j)
	}
	return o, warnings, nil
}

// meta is an object's metadata in the run's namespace, labelled.
func meta(run Run, ns, name string, extra map[string]string) metav1.ObjectMeta {
	labels := run.Labels()
	for k, v := range extra {
		labels[k] = v
	}
	return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}
}

// deployment is a service's Deployment: its pods run `trafficlab serve` with the
// scenario's pod spec.
func deployment(sc *scenario.Scenario, s *scenario.Service, run Run, ns string) (*appsv1.Deployment, []string, error) {
	pod := &s.Pod
	spec, err := json.Marshal(pod)
	if err != nil {
		return nil, nil, err
	}
	args := []string{"serve", "--pod-json", string(spec), "--name", "$(POD_NAME)", "--listen", fmt.Sprintf(":%d", PodPort),
		"--seed", strconv.FormatInt(sc.Spec.Seed, 10), "--service", s.Name}
	if sc.SpokenTo(s.Name, func(p string) bool { return p == scenario.ProtocolGRPC }) {
		args = append(args, "--grpc")
	}
	for _, to := range pod.Callees() {
		args = append(args, "--call", to+"="+target(sc, to))
	}
	// With calls, each pod's figures (what it answered, its calls and which pods
	// answered them) go to its log when it exits, where the engine reads them.
	if sc.HasCalls() {
		args = append(args, "--figures", "-")
	}
	c := corev1.Container{
		Name: "app", Image: run.Image, ImagePullPolicy: run.PullPolicy,
		Command: []string{containerimage.Path}, Args: args,
		// The pod's name, which it answers in, as the kubelet expands it in args.
		Env:       []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
		Ports:     []corev1.ContainerPort{{Name: "http", ContainerPort: PodPort}},
		Resources: resources(pod),
	}
	if p := pod.ReadinessProbe; p != nil {
		c.ReadinessProbe = &corev1.Probe{
			ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz/ready", Port: intstr.FromInt32(PodPort)}},
			InitialDelaySeconds: p.InitialDelaySeconds, PeriodSeconds: *p.PeriodSeconds, TimeoutSeconds: *p.TimeoutSeconds,
			SuccessThreshold: *p.SuccessThreshold, FailureThreshold: *p.FailureThreshold,
		}
	}
	var warnings []string
	if preStop := pod.TerminationSpec().PreStop; preStop > 0 {
		// The image holds trafficlab alone, no shell to run a command in: a hook
		// runs as the sleep action of its length, which is what the scenario times.
		secs := int64(math.Ceil(preStop.Seconds()))
		c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: secs}}}
		if pod.Lifecycle.PreStop.Exec != nil {
			warnings = append(warnings, fmt.Sprintf("service %s: its preStop command runs as a sleep of %d s, its length (the image has no shell)", s.Name, secs))
		}
	}
	podLabels := map[string]string{"app": s.Name}
	for k, v := range pod.Labels {
		podLabels[k] = v
	}
	replicas := int32(s.Replicas)
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta(run, ns, s.Name, nil),
		Spec: appsv1.DeploymentSpec{
			Replicas:        &replicas,
			Selector:        &metav1.LabelSelector{MatchLabels: map[string]string{"app": s.Name}},
			Strategy:        s.Strategy,
			MinReadySeconds: s.MinReadySeconds,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: withRun(run, podLabels)},
				Spec: corev1.PodSpec{
					Containers:                    []corev1.Container{c},
					TerminationGracePeriodSeconds: pod.TerminationGracePeriodSeconds,
					NodeSelector:                  pod.NodeSelector,
					Affinity:                      pod.Affinity,
					Tolerations:                   pod.Tolerations,
					TopologySpreadConstraints:     pod.TopologySpreadConstraints,
					EnableServiceLinks:            new(bool),
				},
			},
		},
	}
	return d, warnings, nil
}

// withRun adds the run's labels to labels.
func withRun(run Run, labels map[string]string) map[string]string {
	for k, v := range run.Labels() {
		labels[k] = v
	}
	return labels
}

// resources are the app container's: the scenario's requests and limits, and
// pod.cpu as its CPU limit.
func resources(pod *scenario.Pod) corev1.ResourceRequirements {
	r := *pod.Resources.DeepCopy()
	if pod.CPU != nil {
		if r.Limits == nil {
			r.Limits = corev1.ResourceList{}
		}
		r.Limits[corev1.ResourceCPU] = *pod.CPU
	}
	return r
}

// service is a scenario service's Service: a ClusterIP on ServicePort to the
// pods' PodPort, or headless.
func service(s *scenario.Service, run Run, ns string) *corev1.Service {
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(run, ns, s.Name, nil),
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": s.Name},
			Ports:    []corev1.ServicePort{{Name: "http", Port: ServicePort, TargetPort: intstr.FromInt32(PodPort)}},
		},
	}
	if s.Headless() {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
		svc.Spec.Ports[0].Port = PodPort
	}
	return svc
}

// target is the URL a client reaches service name by, in the run's namespace.
func target(sc *scenario.Scenario, name string) string {
	for i := range sc.Spec.Services {
		if s := &sc.Spec.Services[i]; s.Name == name && s.Headless() {
			return fmt.Sprintf("http://%s:%d/", name, PodPort)
		}
	}
	return fmt.Sprintf("http://%s:%d/", name, ServicePort)
}

// hpa is a service's HorizontalPodAutoscaler on its Deployment. The controller's
// settings are the cluster's (kube-controller-manager's flags), not an object's.
func hpa(s *scenario.Service, run Run, ns string) *autoscalingv2.HorizontalPodAutoscaler {
	a := s.Autoscaler
	return &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: meta(run, ns, s.Name, nil),
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: s.Name},
			MinReplicas:    a.MinReplicas, MaxReplicas: a.MaxReplicas,
			Metrics: a.Metrics, Behavior: a.Behavior,
		},
	}
}

// job is a client's indexed Job: one `trafficlab load` pod per replica, named by
// its index as the scenario's client pods are, waiting on stdin for the start time
// the engine sends once every pod runs.
func job(sc *scenario.Scenario, c *scenario.Client, run Run, ns string) (*batchv1.Job, error) {
	// The load generator is the client's app; a sidecar would be a container of its
	// own, which the engine does not run (unplayed says so).
	app := *c
	app.Sidecar = nil
	spec, err := json.Marshal(&app)
	if err != nil {
		return nil, err
	}
	n := int32(c.Replicas)
	args := []string{"load", "--client-json", string(spec), "--name", c.Name + "-$(JOB_COMPLETION_INDEX)",
		"--target", target(sc, c.Target), "--duration", sc.Spec.Duration.Duration.String(),
		"--seed", strconv.FormatInt(sc.Spec.Seed, 10), "--stream"}
	if slow := sc.Spec.Report.SlowThreshold.Duration; slow > 0 {
		args = append(args, "--slow-threshold", slow.String())
	}
	mode := batchv1.IndexedCompletion
	placed := placementOf(c)
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta(run, ns, c.Name, nil),
		Spec: batchv1.JobSpec{
			Parallelism: &n, Completions: &n, CompletionMode: &mode, BackoffLimit: new(int32),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: withRun(run, map[string]string{"client": c.Name})},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name: "load", Image: run.Image, ImagePullPolicy: run.PullPolicy,
						// The Job controller gives an indexed Job's container its index
						// as JOB_COMPLETION_INDEX, which the kubelet expands in args.
						Command: []string{containerimage.Path}, Args: args,
						Resources: c.Resources,
						Stdin:     true, StdinOnce: true,
					}},
					NodeSelector:       placed.NodeSelector,
					Affinity:           placed.Affinity,
					Tolerations:        placed.Tolerations,
					EnableServiceLinks: new(bool),
				},
			},
		},
	}, nil
}

// placementOf is a client's placement, empty when it has none.
func placementOf(c *scenario.Client) scenario.Placement {
	if c.Placement == nil {
		return scenario.Placement{}
	}
	return *c.Placement
}

// WriteYAML writes the objects as one multi-document YAML stream, in the order
// they are applied: what `kubectl apply -f` takes. The Jobs' pods wait for a
// start time on stdin (kubectl attach), as the engine sends it.
func (o *Objects) WriteYAML(w io.Writer) error {
	var all []any
	if o.Namespace != nil {
		all = append(all, o.Namespace)
	}
	for _, d := range o.Deployments {
		all = append(all, d)
	}
	for _, s := range o.Services {
		all = append(all, s)
	}
	for _, h := range o.HPAs {
		all = append(all, h)
	}
	for _, j := range o.Jobs {
		all = append(all, j)
	}
	for i, obj := range all {
		out, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(out); err != nil {
			return err
		}
	}
	return nil
}
