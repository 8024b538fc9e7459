package importer

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"trafficlab/inventory"
	"trafficlab/scenario"
)

// clients are the scenario's clients: each workload that calls services and
// serves none (a load generator, a load test's Job), one client per service it
// calls; then, for each service nobody calls, an assumed client, so that the
// scenario has load where the cluster's comes in from outside.
func (im *importer) clients() []*yaml.Node {
	var out []*yaml.Node
	called := map[string]bool{}
	for _, c := range im.out.Calls {
		called[c.To] = true
	}
	for _, w := range im.workloads {
		calls := im.calls[w]
		if w.service != nil || len(calls) == 0 {
			continue
		}
		for _, c := range calls {
			name := w.as
			if len(calls) > 1 {
				name = im.unique(w.as+"-"+c.To, w.namespace)
			}
			replicas := int32(1)
			if w.replicas != nil {
				replicas = *w.replicas
			}
			client := newMapping().set("name", str(name)).set("target", str(c.To))
			client.node.Content[len(client.node.Content)-1].LineComment = fmt.Sprintf("from %s=%s", c.Where, c.Text)
			if replicas != 1 {
				client.set("replicas", integer(replicas))
			}
			out = append(out, im.load(client, c.To, im.injected(w)))
			im.out.Clients = append(im.out.Clients, name)
		}
	}
	for _, w := range im.workloads {
		if w.service == nil || called[w.as] {
			continue
		}
		name := im.unique("users-of-"+w.as, w.namespace)
		client := newMapping().set("name", str(name), "ASSUMED: service "+w.as+" is called by nothing imported, so its load comes from outside.").
			set("target", str(w.as))
		out = append(out, im.load(client, w.as, false))
		im.out.Clients = append(im.out.Clients, name)
	}
	im.destinationRules()
	return out
}

// load gives a client its assumed rate and library, and its sidecar with the
// DestinationRule of its target.
func (im *importer) load(client mapping, target string, sidecar bool) *yaml.Node {
	client.set("rate", str(assumedRate),
		"ASSUMED: requests per second per client pod, arriving at random. Set it from the",
		"callers' request rate (an ingress's or the service's own request metrics).")
	client.set("arrival", str(scenario.ArrivalPoisson))
	if im.speaksGRPC(target) {
		client.set("library", str(grpcLibrary), "ASSUMED: the service names its port grpc; "+grpcLibrary+"'s channel is taken.")
	} else {
		client.set("connections", sharedPool(),
			"ASSUMED: a shared pool of HTTP/1.1 connections; set library to the client's",
			"own (`trafficlab libraries` lists them).")
	}
	if sidecar {
		sc := newMapping()
		if dr := im.ruleFor(target); dr != nil {
			im.applyRule(sc, dr.Object)
		}
		client.set("sidecar", compact(sc.node))
	}
	return client.node
}

// ruleFor is the DestinationRule whose host is the scenario service name.
func (im *importer) ruleFor(name string) *inventory.Object[*inventory.DestinationRule] {
	for i := range im.inv.DestinationRules {
		if im.ruleHost(&im.inv.DestinationRules[i]) == name {
			return &im.inv.DestinationRules[i]
		}
	}
	return nil
}

// ruleHost is the scenario service a DestinationRule's host names
// (cart, cart.shop, cart.shop.svc.cluster.local), or "".
func (im *importer) ruleHost(dr *inventory.Object[*inventory.DestinationRule]) string {
	labels := strings.Split(dr.Object.Spec.Host, ".")
	ns := namespaceOf(dr.Object.Namespace)
	if len(labels) > 1 {
		ns = labels[1]
	}
	return im.byService[ns+"/"+labels[0]]
}

// applyRule sets a client sidecar's circuit breakers and load balancer from
// the rule's connection pool, as Istio translates them into Envoy's cluster
// (pilot/pkg/networking/core/cluster_traffic_policy.go).
func (im *importer) applyRule(sc mapping, dr *inventory.DestinationRule) {
	tp := dr.Spec.TrafficPolicy
	if tp == nil {
		return
	}
	if lb := tp.LoadBalancer; lb != nil && lb.Simple != "" {
		sc.set("lbPolicy", str(lb.Simple))
	}
	cb := newMapping()
	if cp := tp.ConnectionPool; cp != nil {
		if cp.TCP != nil && cp.TCP.MaxConnections != nil {
			cb.set("maxConnections", integer(*cp.TCP.MaxConnections))
		}
		if h := cp.HTTP; h != nil {
			for _, f := range []struct {
				key string
				v   *int64
			}{{"maxPendingRequests", h.HTTP1MaxPendingRequests}, {"maxRequests", h.HTTP2MaxRequests}, {"maxRetries", h.MaxRetries}} {
				if f.v != nil {
					cb.set(f.key, integer(*f.v))
				}
			}
		}
	}
	if len(cb.node.Content) > 0 {
		sc.set("circuitBreakers", compact(cb.node))
	}
}

// destinationRules notes what of each DestinationRule the scenario does not
// carry: a host it does not know, outlier detection, and the rule's effect on
// calls from services' own sidecars.
func (im *importer) destinationRules() {
	for i := range im.inv.DestinationRules {
		dr := &im.inv.DestinationRules[i]
		subject := "DestinationRule " + dr.Object.Name
		host := im.ruleHost(dr)
		if host == "" {
			im.note(dr.Source, subject, "host %s is no service imported: not imported", dr.Object.Spec.Host)
			continue
		}
		tp := dr.Object.Spec.TrafficPolicy
		if tp != nil && len(tp.OutlierDetection) > 0 {
			im.note(dr.Source, subject, "its outlierDetection is not modelled: no pod of %s is ejected", host)
		}
		var callers []string
		for _, c := range im.out.Calls {
			if c.To == host && im.callee(c.From) != nil && im.injected(im.callee(c.From)) && !slices.Contains(callers, c.From) {
				callers = append(callers, c.From)
			}
		}
		if len(callers) > 0 && tp != nil && (tp.ConnectionPool != nil || tp.LoadBalancer != nil) {
			im.note(dr.Source, subject, "its connection pool and load balancer apply to the sidecars of %s, and a scenario models them on clients' sidecars only", strings.Join(callers, ", "))
		}
	}
}
