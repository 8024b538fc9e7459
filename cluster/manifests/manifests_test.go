package manifests

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trafficlab/examples"
	"trafficlab/scenario"
)

func load(t *testing.T, file string, sets ...string) *scenario.Scenario {
	t.Helper()
	data, err := examples.Get(file)
	if err != nil {
		t.Fatal(err)
	}
	sc, _, diags := scenario.Load(file, data, sets)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return sc
}

var run = Run{ID: "x7k2p", Image: "trafficlab.local/trafficlab:v1", PullPolicy: corev1.PullNever}

// argAfter is the value after flag in args; "" when absent.
func argAfter(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// A service's Deployment runs trafficlab serve with the scenario's pod spec, which
// reads back as it was, gRPC where its clients speak it, the readiness probe's
// timings and the CPU limit; its Service is a ClusterIP from port 80 to the pods'
// 8080, its HPA the scenario's; a client's Job runs one load pod per replica, by
// index, waiting on stdin.
func TestBuildMirrorsTheScenario(t *testing.T) {
	sc := load(t, "grpc-hpa-max-connection-age.yaml")
	o, warnings, err := Build(sc, run)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("Build: %v, warnings %v", err, warnings)
	}
	if ns := o.Namespace.Name; ns != "tl-grpc-hpa-max-connection-age-x7k2p" {
		t.Errorf("namespace %q", ns)
	}
	d := o.Deployments[0]
	c := d.Spec.Template.Spec.Containers[0]
	var pod scenario.Pod
	if err := json.Unmarshal([]byte(argAfter(c.Args, "--pod-json")), &pod); err != nil || !reflect.DeepEqual(pod, sc.Spec.Services[0].Pod) {
		t.Errorf("--pod-json does not read back as the scenario's pod: %v", err)
	}
	if *d.Spec.Replicas != 2 || c.Args[0] != "serve" || !slices.Contains(c.Args, "--grpc") || c.ImagePullPolicy != corev1.PullNever ||
		argAfter(c.Args, "--name") != "$(POD_NAME)" || c.Env[0].Name != "POD_NAME" || c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Errorf("deployment replicas %d, args %v", *d.Spec.Replicas, c.Args)
	}
	if p := c.ReadinessProbe; p == nil || p.HTTPGet.Path != "/healthz/ready" || p.PeriodSeconds != 5 || p.HTTPGet.Port.IntValue() != PodPort {
		t.Errorf("readiness probe %+v", p)
	}
	if q := c.Resources.Limits[corev1.ResourceCPU]; q.String() != "1" {
		t.Errorf("cpu limit %v, want pod.cpu 1", q.String())
	}
	s := o.Services[0]
	if s.Spec.ClusterIP != "" || s.Spec.Ports[0].Port != ServicePort || s.Spec.Ports[0].TargetPort.IntValue() != PodPort {
		t.Errorf("service %+v", s.Spec)
	}
	h := o.HPAs[0]
	if h.Spec.ScaleTargetRef.Name != "orders" || h.Spec.MaxReplicas != 8 || *h.Spec.MinReplicas != 2 ||
		*h.Spec.Metrics[0].Resource.Target.AverageUtilization != 60 {
		t.Errorf("hpa %+v", h.Spec)
	}
	j := o.Jobs[0]
	lc := j.Spec.Template.Spec.Containers[0]
	if *j.Spec.Parallelism != 4 || *j.Spec.Completions != 4 || !lc.Stdin || !lc.StdinOnce || lc.Args[0] != "load" ||
		argAfter(lc.Args, "--name") != "checkout-$(JOB_COMPLETION_INDEX)" || argAfter(lc.Args, "--target") != "http://orders:80/" ||
		argAfter(lc.Args, "--duration") != "5m0s" || !slices.Contains(lc.Args, "--stream") {
		t.Errorf("job %+v, args %v", j.Spec, lc.Args)
	}
}

// Every object of a run carries its labels, and the pods too, so that a killed
// run's leftovers are found by them.
func TestEveryObjectIsLabelled(t *testing.T) {
	o, _, err := Build(load(t, "calls-three-tier-shop.yaml"), run)
	if err != nil {
		t.Fatal(err)
	}
	metas := []metav1.ObjectMeta{o.Namespace.ObjectMeta}
	for _, d := range o.Deployments {
		metas = append(metas, d.ObjectMeta, d.Spec.Template.ObjectMeta)
	}
	for _, s := range o.Services {
		metas = append(metas, s.ObjectMeta)
	}
	for _, h := range o.HPAs {
		metas = append(metas, h.ObjectMeta)
	}
	for _, j := range o.Jobs {
		metas = append(metas, j.ObjectMeta, j.Spec.Template.ObjectMeta)
	}
	for _, m := range metas {
		if m.Labels[ManagedByLabel] != ManagedBy || m.Labels[RunLabel] != run.ID {
			t.Errorf("%q lacks the run's labels: %v", m.Name, m.Labels)
		}
	}
	if len(o.Deployments) < 3 || len(o.Jobs) == 0 {
		t.Errorf("%d deployments, %d jobs for the shop", len(o.Deployments), len(o.Jobs))
	}
}

// A headless Service has no ClusterIP and serves on the pods' port, where its
// clients go by name.
func TestHeadless(t *testing.T) {
	o, _, err := Build(load(t, "grpc-headless-round-robin.yaml", "spec.services[0].clusterIP=None"), run)
	if err != nil {
		t.Fatal(err)
	}
	if s := o.Services[0]; s.Spec.ClusterIP != corev1.ClusterIPNone || s.Spec.Ports[0].Port != PodPort {
		t.Errorf("service %+v", s.Spec)
	}
	if got := argAfter(o.Jobs[0].Spec.Template.Spec.Containers[0].Args, "--target"); got != "http://orders:8080/" {
		t.Errorf("target %q", got)
	}
}

// A preStop command runs as a sleep of its length (the image has no shell), said
// in a warning; a sleep hook is a sleep.
func TestPreStop(t *testing.T) {
	for _, c := range []struct {
		set  string
		secs int64
		warn bool
	}{
		{"spec.services[0].pod.lifecycle={preStop: {sleep: {seconds: 10}}}", 10, false},
		{`spec.services[0].pod.lifecycle={preStop: {exec: {command: [sh, -c, "sleep 7"]}}}`, 7, true},
	} {
		o, warnings, err := Build(load(t, "grpc-headless-round-robin.yaml", c.set), run)
		if err != nil {
			t.Fatal(err)
		}
		l := o.Deployments[0].Spec.Template.Spec.Containers[0].Lifecycle
		if l == nil || l.PreStop.Sleep == nil || l.PreStop.Sleep.Seconds != c.secs || (len(warnings) > 0) != c.warn {
			t.Errorf("%s: lifecycle %+v, warnings %v", c.set, l, warnings)
		}
	}
}

// A long scenario name is cut so that the namespace stays a DNS label.
func TestNamespaceIsADNSLabel(t *testing.T) {
	sc := &scenario.Scenario{Metadata: scenario.Metadata{Name: strings.Repeat("a", 70)}}
	if ns := run.Namespace(sc); len(ns) > 63 || !strings.HasSuffix(ns, "-x7k2p") || !strings.HasPrefix(ns, "tl-aaa") {
		t.Errorf("namespace %q (%d characters)", ns, len(ns))
	}
}

// A client's load pods run its app, the load generator, which refuses a client
// spec with a sidecar: the Job's --client-json leaves the sidecar out (the engine
// runs none and says so) and keeps the rest.
func TestLoadPodsGetTheClientWithoutItsSidecar(t *testing.T) {
	sc := load(t, "r5-sidecar-concurrency.yaml")
	o, _, err := Build(sc, run)
	if err != nil {
		t.Fatal(err)
	}
	var c scenario.Client
	args := o.Jobs[0].Spec.Template.Spec.Containers[0].Args
	if err := json.Unmarshal([]byte(argAfter(args, "--client-json")), &c); err != nil {
		t.Fatal(err)
	}
	want := sc.Spec.Clients[0]
	want.Sidecar = nil
	got, _ := json.Marshal(c)
	wanted, _ := json.Marshal(want)
	if string(got) != string(wanted) || sc.Spec.Clients[0].Sidecar == nil {
		t.Errorf("--client-json reads back as\n%s\nwant the scenario's client without its sidecar, the scenario untouched:\n%s", got, wanted)
	}
}
