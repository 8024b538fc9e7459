package inventory

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

const shop = `# a shop, as kustomize build writes it
apiVersion: apps/v1
kind: Deployment
metadata: {name: cart}
spec:
  replicas: 3
  selector: {matchLabels: {app: cart}}
  template:
    metadata: {labels: {app: cart}}
    spec:
      containers: [{name: app, image: cart:1, resources: {requests: {cpu: 200m}}}]
---
apiVersion: v1
kind: Service
metadata: {name: cart}
spec: {selector: {app: cart}, ports: [{port: 80, targetPort: 8080}]}
--- # an HPA of the old API
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata: {name: cart}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: cart}
  minReplicas: 2
  maxReplicas: 10
  targetCPUUtilizationPercentage: 60
---
---
# only a comment
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: cart, namespace: shop}
spec:
  host: cart
  trafficPolicy:
    connectionPool: {http: {http1MaxPendingRequests: 10}}
    outlierDetection: {consecutive5xxErrors: 5}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {istio-injection: enabled}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: shop}
`

const list = `{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "pool-0", "labels": {"pool": "a"}}, "status": {"allocatable": {"cpu": "4"}}},
  {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "cart"}, "spec": {"minAvailable": 2}},
  {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kube-proxy", "namespace": "kube-system"}, "data": {"config.conf": "mode: ipvs"}}
]}`

// Each object is read typed with its file and line, a List's items with their
// place, an old HPA converted, and a kind not kept listed.
func TestRead(t *testing.T) {
	var inv Inventory
	if err := inv.Read("shop.yaml", strings.NewReader(shop)); err != nil {
		t.Fatal(err)
	}
	if err := inv.Read("-", strings.NewReader(list)); err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, d := range inv.Deployments {
		got = append(got, fmt.Sprintf("Deployment %s %d at %s", d.Object.Name, *d.Object.Spec.Replicas, d.Source))
	}
	for _, s := range inv.Services {
		got = append(got, fmt.Sprintf("Service %s port %d at %s", s.Object.Name, s.Object.Spec.Ports[0].Port, s.Source))
	}
	for _, h := range inv.HPAs {
		m := h.Object.Spec.Metrics[0]
		got = append(got, fmt.Sprintf("HPA %s %s %d–%d %s %s %d%% at %s", h.Object.Name, h.Object.APIVersion, *h.Object.Spec.MinReplicas,
			h.Object.Spec.MaxReplicas, m.Type, m.Resource.Name, *m.Resource.Target.AverageUtilization, h.Source))
	}
	for _, n := range inv.Nodes {
		got = append(got, fmt.Sprintf("Node %s cpu %s at %s", n.Object.Name, n.Object.Status.Allocatable.Cpu(), n.Source))
	}
	for _, p := range inv.PDBs {
		got = append(got, fmt.Sprintf("PDB %s minAvailable %s at %s", p.Object.Name, p.Object.Spec.MinAvailable, p.Source))
	}
	for _, c := range inv.ConfigMaps {
		got = append(got, fmt.Sprintf("ConfigMap %s/%s at %s", c.Object.Namespace, c.Object.Name, c.Source))
	}
	for _, r := range inv.DestinationRules {
		got = append(got, fmt.Sprintf("DestinationRule %s host %s pending %d at %s", r.Object.Name, r.Object.Spec.Host,
			*r.Object.Spec.TrafficPolicy.ConnectionPool.HTTP.HTTP1MaxPendingRequests, r.Source))
	}
	for _, n := range inv.Namespaces {
		got = append(got, fmt.Sprintf("Namespace %s %v at %s", n.Object.Name, n.Object.Labels, n.Source))
	}
	for _, o := range inv.Others {
		got = append(got, fmt.Sprintf("other %s %s %s/%s at %s", o.APIVersion, o.Kind, o.Namespace, o.Name, o.Source))
	}
	want := []string{
		"Deployment cart 3 at shop.yaml:1",
		"Service cart port 80 at shop.yaml:13",
		"HPA cart autoscaling/v2 2–10 Resource cpu 60% at shop.yaml:18",
		"Node pool-0 cpu 4 at -:1: items[0]",
		"PDB cart minAvailable 2 at -:1: items[1]",
		"ConfigMap kube-system/kube-proxy at -:1: items[2]",
		"DestinationRule cart host cart pending 10 at shop.yaml:30",
		"Namespace shop map[istio-injection:enabled] at shop.yaml:39",
		"other networking.k8s.io/v1 Ingress shop/web at shop.yaml:43",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("read\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if inv.HPAs[0].Object.Spec.ScaleTargetRef.Name != "cart" || inv.HPAs[0].Object.Spec.Metrics[0].Type != autoscalingv2.ResourceMetricSourceType {
		t.Errorf("HPA %+v", inv.HPAs[0].Object.Spec)
	}
}

// Input that is no object is refused with its file and line.
func TestReadRefuses(t *testing.T) {
	for _, tc := range []struct{ name, input, want string }{
		{"bad YAML", "apiVersion: v1\nkind: Service\n---\nkind: [\n", "f.yaml:4: "},
		{"no kind", "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\nmetadata: {name: b}\n", "f.yaml:5: not a Kubernetes object: no apiVersion and kind"},
		{"a field of the wrong type", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {replicas: many}\n", "f.yaml:1: Deployment a: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var inv Inventory
			err := inv.Read("f.yaml", strings.NewReader(tc.input))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v, want it to start %q", err, tc.want)
			}
		})
	}
}

// A directory is read file by file in lexical order, its YAML and JSON files
// only; a file in it that holds no object (a chart's values, a template) is
// skipped with why, and the same file named alone is refused.
func TestReadPath(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"b/svc.yml":                "apiVersion: v1\nkind: Service\nmetadata: {name: b}\n",
		"a.yaml":                   "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n",
		"c.json":                   `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "c"}}`,
		"README.md":                "not a manifest",
		"kustom.txt":               "kind: [",
		"chart/values.yaml":        "replicaCount: 3\n",
		"chart/templates/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Release.Name }}}\n",
		"chart/templates/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\n  labels: {{- include \"x\" . | nindent 4 }}\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var inv Inventory
	if err := inv.ReadPath(dir); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range inv.Services {
		names = append(names, s.Object.Name+" "+filepath.Base(s.Source.File))
	}
	if got := strings.Join(names, ", "); got != "a a.yaml, b svc.yml, c c.json" {
		t.Errorf("read %s", got)
	}
	if len(inv.Unread) != 3 || !strings.Contains(inv.Unread[0], "cm.yaml:1: ") || !strings.Contains(inv.Unread[1], "svc.yaml:1: ") ||
		!strings.Contains(inv.Unread[1], "a Helm template?") || !strings.Contains(inv.Unread[2], "values.yaml:1: not a Kubernetes object: no apiVersion and kind") {
		t.Errorf("unread %q, want the template and the values", inv.Unread)
	}
	var alone Inventory
	if err := alone.ReadPath(filepath.Join(dir, "chart/values.yaml")); err == nil || !strings.Contains(err.Error(), "not a Kubernetes object") {
		t.Errorf("values.yaml named alone: %v, want it refused", err)
	}
}
