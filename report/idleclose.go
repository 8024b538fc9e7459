package report

import (
	"fmt"

	"trafficlab/result"
)

// idleCloses says which requests reached a connection their service's app had
// already closed as idle (pod.idleTimeout), why, and how to stop it; nothing when
// none did.
func idleCloses(r *result.Result) []string {
	var out []string
	for _, s := range r.Services {
		if s.IdleCloseResets == 0 {
			continue
		}
		after := GoDuration(s.IdleTimeoutS)
		out = append(out, fmt.Sprintf("%s reached connections that %s's app had already closed as idle "+
			"(pod.idleTimeout %s), and its kernel reset them: each client reused the connection while the app's close "+
			"was still on its way to it, or without looking for it. A library that resends a request after such a reset "+
			"hides it (requests.retried); one that does not passes it to its caller as a connection reset. "+
			"Have the clients close idle connections before the app does, with an idle timeout under %s "+
			"(connections.idleTimeout), or give the app a longer idle timeout than theirs.",
			counted(s.IdleCloseResets, "request"), s.Name, after, after))
	}
	return out
}
