package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"trafficlab/internal/localcluster"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

// The shop's manifests applied to the local cluster's API server and imported
// back from it give the scenario the files give, with the cluster's Nodes and
// kube-proxy ConfigMap beside them: the server's defaults (probe timings, the
// rolling update, the HPA's behavior, the v1 HPA stored as v2) read as the
// manifests that left them out.
func TestImportOnTheLocalCluster(t *testing.T) {
	kubeconfig := localcluster.Kubeconfig(t)
	cfg, cs := localcluster.Client(t)
	dyn := dynamic.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	const ns, manifests = "shop", "../../importer/testdata/shop/shop.yaml"
	deleteNamespace := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		err = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Errorf("namespace %s not deleted: %v", ns, err)
		}
	}
	deleteNamespace() // a killed run's
	t.Cleanup(deleteNamespace)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cs.Discovery()))
	f, err := os.Open(manifests)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := yaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); err != nil {
			break
		}
		// Paused, a Deployment makes no ReplicaSet and so no pods, whose images
		// the nodes could not pull; an import does not read spec.paused.
		if u.GetKind() == "Deployment" {
			if err := unstructured.SetNestedField(u.Object, true, "spec", "paused"); err != nil {
				t.Fatal(err)
			}
		}
		m, err := mapper.RESTMapping(u.GroupVersionKind().GroupKind(), u.GroupVersionKind().Version)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dyn.Resource(m.Resource).Namespace(ns).Create(ctx, &u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}

	// The cluster's Nodes and kube-proxy ConfigMap, as kubectl get -o json
	// prints them, for the files' side.
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	list := map[string]any{"apiVersion": "v1", "kind": "List"}
	var items []any
	for i := range nodes.Items {
		n := nodes.Items[i]
		n.APIVersion, n.Kind = "v1", "Node"
		items = append(items, n)
	}
	if cm, err := cs.CoreV1().ConfigMaps("kube-system").Get(ctx, "kube-proxy", metav1.GetOptions{}); err == nil {
		cm.APIVersion, cm.Kind = "v1", "ConfigMap"
		items = append(items, cm)
	}
	list["items"] = items
	cluster, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}

	code, fromFiles, errs := runCLI("import", "-f", manifests, "-f", writeTemp(t, "cluster.json", string(cluster)), "--name", "shop")
	if code != exitOK {
		t.Fatalf("import from the files: exit %d: %s", code, errs)
	}
	code, fromCluster, errs := runCLI("import", "--kubeconfig", kubeconfig, "-n", ns, "--name", "shop")
	if code != exitOK {
		t.Fatalf("import from the cluster: exit %d: %s", code, errs)
	}
	t.Logf("from the cluster, stderr:\n%s", errs)
	// The description says where each came from; the rest must agree.
	from := func(s string) string {
		i := strings.Index(s, "Made by trafficlab import from ")
		j := strings.Index(s[i:], "\n")
		return s[:i] + s[i+j:]
	}
	if a, b := from(fromCluster), from(fromFiles); a != b {
		t.Errorf("from the cluster and from the files, they differ:\n%s", lineDiff(a, b))
	}
	for _, want := range []string{"- name: frontend", "proxyMode: ", "minReplicas: 2"} {
		if !strings.Contains(fromCluster, want) {
			t.Errorf("the cluster's scenario lacks %q:\n%s", want, fromCluster)
		}
	}
	if strings.Contains(fromCluster, "no Nodes were read") {
		t.Errorf("the cluster's Nodes were not read:\n%s", fromCluster)
	}
}

// lineDiff lists the lines of a and b that differ, by line number.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out = append(out, fmt.Sprintf("%d: %q\n%d: %q", i+1, x, i+1, y))
		}
	}
	return strings.Join(out, "\n")
}
