package report

import (
	"fmt"
	"sort"
	"strings"

	"trafficlab/result"
)

// serviceConfig is how svc was configured, as the Result records it; the zero
// Service when it records none (a load generator's Result).
func serviceConfig(r *result.Result, svc string) result.Service {
	for _, s := range r.Services {
		if s.Name == svc {
			return s
		}
	}
	return result.Service{}
}

// isHeadless tells whether svc has no ClusterIP.
func isHeadless(r *result.Result, svc string) bool { return serviceConfig(r, svc).Headless }

// headlessClient is the first client of headless svc, by name, that records how
// it resolved the name; nil when none does (only services' pods call it).
func headlessClient(r *result.Result, svc string) *result.Client {
	var out *result.Client
	for i := range r.Clients {
		c := &r.Clients[i]
		if c.Target == svc && c.Resolution != nil && (out == nil || c.Name < out.Name) {
			out = c
		}
	}
	return out
}

// explainHeadless is Explain for a headless Service, whose load no kube-proxy
// spreads: each client's library picks the pods, from what DNS answered, as its
// Resolution records.
func explainHeadless(r *result.Result, svc string, pods []result.Pod, lived bool, callers []caller, peak, conns, reqs int64) string {
	n, idle := len(pods), idlePods(pods)
	s := fmt.Sprintf("Why the load on %s is uneven: %s is headless, so no kube-proxy balances it: its clients look its name up, "+
		"which cluster DNS answers with the ready pods in a new random order each time, and connect to the pods they pick. %s. ",
		svc, svc, openedBy(callers))
	s += holders(r, svc)
	if lived {
		s += cameAndWent(n)
	}
	late := lateIdle(pods)
	c := headlessClient(r, svc)
	switch {
	case (c == nil || c.Protocol != "grpc") && !result.LongLived(reqs, conns):
		return s + "Connections are short-lived here, so the spread comes from few connections or from pods that answer at different speeds."
	case c == nil:
		// Only services' pods call it, and the Result does not say how their
		// library resolves.
		return s + "Each calling pod's connections stay with the pods its library picked from the answers. To spread it: " +
			"recycle connections (connections.maxLifetime), or balance per request."
	}
	lib := c.Library
	if lib == "" {
		lib = c.Name
	}
	res := c.Resolution
	switch {
	case c.Protocol == "grpc" && c.LoadBalancing == "round_robin":
		s += fmt.Sprintf("A round_robin channel (%s) connects to every pod of its last answer, and looks the name up again only after it "+
			"loses a connection, at most every %s", lib, GoDuration(res.ReresolveS))
		if len(late) > 0 {
			s += fmt.Sprintf(": %s came after the channels had resolved, and got no connection", joinAnd(late))
		}
		s += ". " + roundRobinRemedy(r, svc, res)
	case c.Protocol == "grpc":
		s += fmt.Sprintf("A pick_first channel (%s's default) connects to the first address of its answer and sends every call there "+
			"until that connection closes: %s", lib, expectedIdle(peak, "channel connection", n, idle, false))
		s += "To spread it: round_robin (connections.loadBalancing: round_robin) connects each channel to every pod of its answer"
		if len(late) > 0 {
			s += fmt.Sprintf("; %s came after the channels had resolved, and reaching pods added later also takes a server "+
				"maxConnectionAge (pod.grpc.maxConnectionAge), after which channels resolve again", joinAnd(late))
		}
		s += "."
	case res.CacheS < 0:
		s += fmt.Sprintf("%s keeps its first answer for the whole run and %s", lib, map[string]string{
			"first":  "opens every connection to its first address, so each client pod reaches one pod",
			"rotate": "opens its connections to its addresses in turn",
			"random": "opens each connection to a random address of it",
		}[res.Pick])
		if len(late) > 0 {
			s += fmt.Sprintf(": %s came after, and got no connection", joinAnd(late))
		}
		s += ". To spread it: have the client look the name up again (a DNS cache that expires), or give the Service a ClusterIP, " +
			"whose kube-proxy rules follow the pods."
	case res.CacheS > 0 && res.Pick == "first":
		s += fmt.Sprintf("%s keeps an answer %s and opens every new connection to its first address, so the connections a client pod "+
			"opens within %s all go to one pod. To spread it: a shorter DNS cache in the client (the JVM's networkaddress.cache.ttl), "+
			"or a ClusterIP, whose kube-proxy picks a pod per connection.", lib, GoDuration(res.CacheS), GoDuration(res.CacheS))
	default:
		s += fmt.Sprintf("%s looks the name up for each new connection and takes the first address of the shuffled answer, a random "+
			"ready pod, as kube-proxy's iptables rules would; the connection then stays with it. ", lib)
		if len(late) > 0 && len(late) == idle {
			s += fmt.Sprintf("%s came after the %s connections were open, and established ones never move. ", joinAnd(late), whose(callers))
		} else {
			s += expectedIdle(peak, "long-lived connection", n, idle, true)
		}
		s += "To spread it: open more connections than pods, recycle them (connections.maxLifetime), or balance per request."
	}
	return s
}

// roundRobinRemedy is how round_robin channels reach the pods of svc that a
// scale-out adds: only a lost connection makes a channel resolve again.
func roundRobinRemedy(r *result.Result, svc string, res *result.Resolution) string {
	if age := serviceConfig(r, svc).GRPCMaxConnectionAgeS; age > 0 {
		return fmt.Sprintf("The server ends each connection after %s (pod.grpc.maxConnectionAge), so a channel reaches new pods within "+
			"the age (give or take 10 %%) plus %s; a shorter age reaches them sooner.", GoDuration(age), GoDuration(res.ReresolveS))
	}
	return fmt.Sprintf("To spread it: have the server end connections as they age (pod.grpc.maxConnectionAge): each channel then "+
		"resolves again, and reaches new pods within the age (give or take 10 %%) plus %s.", GoDuration(res.ReresolveS))
}

// maxHolders is how many client pods holders names before it counts the rest.
const maxHolders = 8

// holders says which client pod holds which connections to which pod of svc, from
// the clients' Held: "Connections by client pod: checkout-0 → orders-0;
// checkout-1 → orders-3 (2), orders-4. "; "" when no client records it.
func holders(r *result.Result, svc string) string {
	clients := make([]*result.Client, 0, len(r.Clients))
	for i := range r.Clients {
		if c := &r.Clients[i]; c.Target == svc && len(c.Held) > 0 {
			clients = append(clients, c)
		}
	}
	sort.Slice(clients, func(i, j int) bool { return clients[i].Name < clients[j].Name })
	var parts []string
	n := 0
	for _, c := range clients {
		for _, h := range c.Held {
			if n++; n > maxHolders {
				continue
			}
			pods := make([]string, 0, len(h.To))
			for p := range h.To {
				pods = append(pods, p)
			}
			sort.Strings(pods)
			for i, p := range pods {
				if h.To[p] > 1 {
					pods[i] = fmt.Sprintf("%s (%d)", p, h.To[p])
				}
			}
			if len(pods) == 0 {
				pods = []string{"none"}
			}
			parts = append(parts, h.Pod+" → "+strings.Join(pods, ", "))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	s := "Connections by client pod: " + strings.Join(parts, "; ")
	if n > maxHolders {
		s += fmt.Sprintf("; %d more client pods", n-maxHolders)
	}
	return s + ". "
}
