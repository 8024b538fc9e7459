package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/equality"

	"trafficlab/model/hpa"
	"trafficlab/scenario"
)

// shape is what of a scenario survives Kubernetes objects and back: its
// services' names, replicas, ClusterIP kind, autoscalers and calls, and its
// clients' targets and replicas.
func shape(t *testing.T, sc *scenario.Scenario) []string {
	t.Helper()
	var out []string
	for _, s := range sc.Spec.Services {
		line := fmt.Sprintf("service %s replicas %d headless %v calls %v", s.Name, s.Replicas, s.Headless(), s.Pod.Callees())
		if a := s.Autoscaler; a != nil {
			spec := hpa.Undefaulted(autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: a.MinReplicas, MaxReplicas: a.MaxReplicas, Metrics: a.Metrics, Behavior: a.Behavior})
			line += fmt.Sprintf(" autoscaler %d-%d metrics %v behavior %v", *a.MinReplicas, a.MaxReplicas, spec.Metrics, spec.Behavior)
		}
		out = append(out, line)
	}
	for _, c := range sc.Spec.Clients {
		out = append(out, fmt.Sprintf("client %s → %s replicas %d", c.Name, c.Target, c.Replicas))
	}
	return out
}

// Every example run by `cluster --dry-run` and imported back has the same
// services, replicas, autoscalers, calls and clients.
func TestImportRoundTrip(t *testing.T) {
	examples, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(examples) == 0 {
		t.Fatalf("examples: %v %v", examples, err)
	}
	for _, ex := range examples {
		t.Run(filepath.Base(ex), func(t *testing.T) {
			code, objects, errs := runCLI("cluster", "--dry-run", ex)
			if code != exitOK {
				t.Fatalf("dry run: exit %d: %s", code, errs)
			}
			code, imported, errs := runCLI("import", "-f", writeTemp(t, "objects.yaml", objects))
			if code != exitOK {
				t.Fatalf("import: exit %d: %s", code, errs)
			}
			back, _, diags := scenario.Load("imported.yaml", []byte(imported), nil)
			if diags.HasErrors() {
				t.Fatalf("the imported scenario does not load: %v\n%s", diags, imported)
			}
			orig, _, diags := scenario.LoadFile(ex, nil)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if want, got := shape(t, orig), shape(t, back); !equality.Semantic.DeepEqual(got, want) {
				t.Errorf("imported back as\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// What import refuses, before it reads anything, and a manifest given to
// simulate, which points at import.
func TestImportRefuses(t *testing.T) {
	deployment := writeTemp(t, "web.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"import"}, "give the manifests with -f FILE, DIR or -, or a cluster with --kubeconfig or --context"},
		{[]string{"import", "-f", deployment, "--context", "prod"}, "give one or the other"},
		{[]string{"import", "-f", deployment, "-n", "shop"}, "-n and -A choose a cluster's namespaces"},
		{[]string{"import", "--kubeconfig", "/nonexistent/kubeconfig"}, "the cluster's kubeconfig"},
		{[]string{"import", "-f", "/nonexistent/dir"}, "no such file or directory"},
		{[]string{"import", "-f", deployment}, "no Deployment or StatefulSet behind a Service was read"},
		{[]string{"simulate", deployment}, "web.yaml:2:7: this is a Deployment (apps/v1), not a Scenario: run `trafficlab import -f " + deployment + "`"},
	} {
		code, _, errs := runCLI(tc.args...)
		if code != exitBadInput || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, %q; want exit %d saying %q", tc.args, code, errs, exitBadInput, tc.want)
		}
	}
}

// The scenario goes to stdout and what was inferred and left out to stderr.
func TestImportWritesScenarioAndSummary(t *testing.T) {
	code, out, errs := runCLI("import", "-f", "../../importer/testdata/shop", "--name", "shop")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if _, _, diags := scenario.Load("shop.yaml", []byte(out), nil); diags.HasErrors() {
		t.Errorf("stdout is no valid scenario: %v", diags)
	}
	for _, want := range []string{"imported: services 6, clients 1, calls inferred 7.", "frontend → cart  env CART_SERVICE_ADDR=cart:7070", "Ingress shop: a kind the scenario does not model"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}
