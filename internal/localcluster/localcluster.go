// Package localcluster gives tests the local Kubernetes cluster that
// hack/localcluster.sh brings up, and skips them where there is none.
package localcluster

import (
	"os"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Kubeconfig is the local cluster's kubeconfig file, from
// TRAFFICLAB_CLUSTER_KUBECONFIG; without one, t is skipped.
func Kubeconfig(t testing.TB) string {
	t.Helper()
	kubeconfig := os.Getenv("TRAFFICLAB_CLUSTER_KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("no local cluster: ./test.sh runs it with TRAFFICLAB_CLUSTER_KUBECONFIG set (hack/localcluster.sh up)")
	}
	return kubeconfig
}

// Client is the local cluster's address and a client of it; without one, t is
// skipped.
func Client(t testing.TB) (*rest.Config, *kubernetes.Clientset) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", Kubeconfig(t))
	if err != nil {
		t.Fatal(err)
	}
	return cfg, kubernetes.NewForConfigOrDie(cfg)
}
