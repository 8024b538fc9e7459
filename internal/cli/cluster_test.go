package cli

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// --dry-run prints the run's objects as YAML that decodes back: the namespace
// first, then per service its Deployment, Service and HPA, then the clients'
// Jobs, every one in the run's namespace and labelled; with --namespace, no
// namespace of its own.
func TestClusterDryRunPrintsTheObjects(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
		ns   string
	}{
		{[]string{"../../examples/grpc-hpa-max-connection-age.yaml"},
			[]string{"Namespace", "Deployment", "Service", "HorizontalPodAutoscaler", "Job"}, "tl-grpc-hpa-max-connection-age-"},
		{[]string{"../../examples/grpc-hpa-max-connection-age.yaml", "-n", "team-a", "-o", "yaml"},
			[]string{"Deployment", "Service", "HorizontalPodAutoscaler", "Job"}, "team-a"},
	} {
		code, out, errs := runCLI(append([]string{"cluster", "--dry-run"}, tc.args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errs)
		}
		var kinds []string
		dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(out), 4096)
		for {
			var u unstructured.Unstructured
			if err := dec.Decode(&u.Object); err != nil {
				break
			}
			kinds = append(kinds, u.GetKind())
			ns := u.GetNamespace()
			if u.GetKind() == "Namespace" {
				ns = u.GetName()
			}
			if !strings.HasPrefix(ns, tc.ns) || u.GetLabels()["app.kubernetes.io/managed-by"] != "trafficlab" || u.GetLabels()["trafficlab.io/run"] == "" {
				t.Errorf("%v: %s %s in namespace %q, labels %v: want namespace %s…, the run's labels", tc.args, u.GetKind(), u.GetName(), ns, u.GetLabels(), tc.ns)
			}
		}
		if strings.Join(kinds, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%v: kinds %v, want %v", tc.args, kinds, tc.want)
		}
	}
}

// What the cluster command refuses, before it reaches any cluster.
func TestClusterRefusesBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--dry-run", "-o", "json"}, exitBadInput, "--dry-run prints YAML"},
		{[]string{"-o", "yaml"}, exitBadInput, "give --dry-run too"},
		{[]string{"--pull-policy", "Sometimes"}, exitBadInput, "want Never, IfNotPresent or Always"},
		{[]string{"--requests", "r.csv"}, exitBadInput, "use simulate --requests"},
		{[]string{"--cleanup", "../../examples/r1-curl-loop.yaml"}, exitBadInput, "--cleanup takes no FILE"},
		{[]string{"--kubeconfig", "/nonexistent/kubeconfig"}, exitBadInput, "the cluster's kubeconfig"},
	} {
		code, _, errs := runCLI(append([]string{"cluster"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("cluster %v: exit %d, %q; want exit %d saying %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
}
