package report

import (
	"fmt"
	"strings"

	"trafficlab/result"
)

// clusterRun says where a run of the cluster engine ran, and what that cluster
// decides otherwise than the scenario says: the figures beside it come from that
// cluster, not from the scenario's settings. Nothing for other engines.
func clusterRun(r *result.Result) []string {
	c := r.Cluster
	if c == nil {
		return nil
	}
	out := []string{fmt.Sprintf("Ran on the cluster at %s (Kubernetes %s), in namespace %s, with the image %s.",
		c.Server, c.Version, c.Namespace, c.Image)}
	if len(c.Differences) > 0 {
		out = append(out, "Where the cluster differs from the scenario: "+strings.Join(c.Differences, "; ")+".")
	}
	return out
}
