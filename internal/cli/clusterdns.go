package cli

import (
	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"trafficlab/cluster/localdns"
	"trafficlab/sim"
)

// newClusterDNS is the local test cluster's DNS server (hack/localcluster.sh):
// Services' names answered from the API server's watches, where no CoreDNS image
// can be pulled. Hidden: a test cluster's part, not a user's command.
func newClusterDNS() *cobra.Command {
	var kubeconfig, listen string
	c := &cobra.Command{
		Use:    "clusterdns",
		Short:  "Answer DNS for a cluster's Services from its API server, as CoreDNS's kubernetes plugin does",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
			if err != nil {
				return badUsage(c, err)
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			ctx, stop := interruptible(c.Context())
			defer stop()
			return localdns.Serve(ctx, cs, listen, sim.Stream(1, "localdns"))
		},
	}
	c.Flags().StringVar(&kubeconfig, "kubeconfig", "", "the cluster's kubeconfig")
	c.Flags().StringVar(&listen, "listen", "", "IP:PORT to answer on, UDP and TCP")
	return c
}
