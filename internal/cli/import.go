package cli

import (
	"cmp"
	"context"
	"time"

	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/spf13/cobra"

	"trafficlab/importer"
	"trafficlab/inventory"
)

type importFlags struct {
	kubeconfigFlags
	files         []string
	name          string
	namespace     string
	allNamespaces bool
	live          bool
}

func newImport(stdout, stderr io.Writer) *cobra.Command {
	var f importFlags
	c := &cobra.Command{
		Use:   "import (-f FILE|DIR|- ... | --kubeconfig FILE [-n NS | -A])",
		Short: "Make a scenario from Kubernetes manifests or a live cluster",
		Long: `import reads the Kubernetes objects a system is written in and prints a scenario
that validates and runs. It reads multi-document YAML and JSON, the Lists that
kubectl get -o yaml prints, and what kustomize build or helm template print (give
- to read stdin). A directory is read file by file; a file in it that holds no
Kubernetes object (a chart's values.yaml, a template helm has not rendered) is
skipped and listed on stderr.

With --kubeconfig or --context instead, it reads a live cluster's objects in one
namespace (-n, default: the context's) or all of them (-A), with get and list
only. It needs that access to:
` + "  " + strings.Join(inventory.Access, "\n  ") + `
A read the cluster forbids of Nodes, Namespaces or kube-system's kube-proxy
ConfigMap is said on stderr, and the import goes on without it.

From each Deployment or StatefulSet behind a Service it makes a service: replicas,
the app container's CPU and memory, readiness probe timing, preStop hook, grace
period, affinity, tolerations, topology spread constraints, rollout strategy. An HPA joins the service its
scaleTargetRef names (autoscaling/v1 and v2; CPU metrics). Nodes become node pools
(allocatable CPU, labels, taints), kube-proxy's ConfigMap sets the proxy mode.
Istio's injection (namespace label, pod label or annotation) gives a service an
Envoy sidecar, with its CPU limit and concurrency from the annotations; a
DestinationRule's connection pool becomes a client sidecar's circuit breakers.

Calls between services are inferred from the addresses a container is given in
its environment (its own or from a ConfigMap) and arguments: cart:7070,
http://cart/, dns:///cart.shop.svc.cluster.local:7070. A workload no Service
fronts that calls one (a load generator) becomes a client.

Manifests do not say how long a request takes, which client library an app uses
or how much load arrives: each such value in the scenario is marked ASSUMED with
a comment saying how to measure it. What was inferred, and every object or field
not imported with the reason, is printed on stderr.`,
		Example: `  trafficlab import -f k8s/ > shop.yaml && trafficlab simulate shop.yaml
  kustomize build overlays/prod | trafficlab import -f - > prod.yaml
  trafficlab import -f deploy.yaml -f <(kubectl get nodes,configmap/kube-proxy -n kube-system -o yaml)
  trafficlab import --context prod -n shop > prod-shop.yaml`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			f.live = c.Flags().Changed("kubeconfig") || c.Flags().Changed("context")
			switch {
			case len(f.files) == 0 && !f.live:
				return badUsage(c, fmt.Errorf("give the manifests with -f FILE, DIR or -, or a cluster with --kubeconfig or --context"))
			case len(f.files) > 0 && f.live:
				return badUsage(c, fmt.Errorf("-f reads manifests, --kubeconfig and --context a cluster: give one or the other"))
			case !f.live && (f.namespace != "" || f.allNamespaces):
				return badUsage(c, fmt.Errorf("-n and -A choose a cluster's namespaces: give --kubeconfig or --context too"))
			case f.namespace != "" && f.allNamespaces:
				return badUsage(c, fmt.Errorf("-n and -A: give one or the other"))
			}
			var inv inventory.Inventory
			from, err := f.read(c.Context(), &inv)
			if err != nil {
				return err
			}
			return writeImport(&inv, importer.Options{Name: f.name, From: from}, stdout, stderr)
		},
	}
	f.kubeconfigFlags.register(c)
	fl := c.Flags()
	fl.StringArrayVarP(&f.files, "filename", "f", nil, "a manifest file, a directory of them, or - for stdin (repeatable)")
	fl.StringVarP(&f.namespace, "namespace", "n", "", "the cluster's namespace to read (default: the context's, else default)")
	fl.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "read every namespace of the cluster")
	fl.StringVar(&f.name, "name", "", "the scenario's name (default: imported)")
	return c
}

// read reads the files or the cluster into inv, and says what it read.
func (f *importFlags) read(ctx context.Context, inv *inventory.Inventory) (string, error) {
	if !f.live {
		for _, file := range f.files {
			var err error
			if file == "-" {
				err = inv.Read("-", os.Stdin)
			} else {
				err = inv.ReadPath(file)
			}
			if err != nil {
				return "", badInput{err}
			}
		}
		return strings.Join(baseNames(f.files), ", "), nil
	}
	cfg, err := f.restConfig()
	if err != nil {
		return "", err
	}
	loader := f.clientConfig()
	raw, err := loader.RawConfig()
	if err != nil {
		return "", badKubeconfig(err)
	}
	name := cmp.Or(f.context, raw.CurrentContext, cfg.Host)
	namespace := f.namespace
	if namespace == "" && !f.allNamespaces {
		if namespace, _, err = loader.Namespace(); err != nil {
			return "", badKubeconfig(err)
		}
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := inv.ReadCluster(ctx, cs, dyn, name, namespace); err != nil {
		return "", fmt.Errorf("cluster %s: %w", name, err)
	}
	if namespace == "" {
		return fmt.Sprintf("cluster %s, every namespace", name), nil
	}
	return fmt.Sprintf("cluster %s, namespace %s", name, namespace), nil
}

// writeImport makes the scenario from inv, prints it on stdout and what was
// inferred and left out on stderr.
func writeImport(inv *inventory.Inventory, opt importer.Options, stdout, stderr io.Writer) error {
	im, err := importer.Scenario(inv, opt)
	if err != nil {
		return badInput{err}
	}
	if err := im.WriteYAML(stdout); err != nil {
		return err
	}
	return im.WriteSummary(stderr)
}

// baseNames are the files' names without their directories, which differ
// from machine to machine.
func baseNames(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = filepath.Base(f)
	}
	return out
}
