package cli

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// newPause is a pod sandbox's process, as Kubernetes' pause image runs one: it holds
// the pod's namespaces and waits for SIGTERM or SIGINT. `trafficlab image --pause`
// makes the image that runs it, for a cluster that cannot pull
// registry.k8s.io/pause (the local test cluster).
func newPause() *cobra.Command {
	return &cobra.Command{
		Use:    "pause",
		Short:  "Wait for SIGTERM or SIGINT, as a pod sandbox's pause process",
		Hidden: true,
		Args:   cobra.NoArgs,
		Run: func(*cobra.Command, []string) {
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
			<-sig
		},
	}
}
