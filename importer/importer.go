// Package importer makes a scenario from the Kubernetes objects of an
// inventory: a service per Deployment or StatefulSet behind a Service, its
// autoscaler from the HPA that targets it, its pod spec as far as the scenario
// mirrors it, the node pools from the Nodes, kube-proxy's mode from its
// ConfigMap, Istio's sidecars from the injection labels and annotations, and the
// calls between services from the addresses their containers are given.
//
// Manifests do not say how long a request takes, which library a client uses or
// how much load arrives: the scenario gets a value for each, marked with a
// comment saying it is assumed and how to measure the real one. Objects that
// carry nothing a run plays are listed with the reason.
package importer

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"

	"trafficlab/inventory"
	"trafficlab/scenario"
)

// Call is a call between services inferred from a container's address.
type Call struct {
	From, To string
	// Where is what named the address (`env CART_ADDR`) and Text the address.
	Where, Text string
	Source      inventory.Source
}

// Note is something about one object the scenario does not carry, or carries
// by an assumption.
type Note struct {
	Source  inventory.Source
	Subject string
	Text    string
}

func (n Note) String() string {
	if at := n.Source.String(); at != "" {
		return fmt.Sprintf("%s: %s: %s", at, n.Subject, n.Text)
	}
	return fmt.Sprintf("%s: %s", n.Subject, n.Text)
}

// Import is the scenario made, with what was inferred and left out.
type Import struct {
	// Doc is the scenario, with its comments.
	Doc      *yaml.Node
	Services []string
	Clients  []string
	Calls    []Call
	// Dropped are inferred calls left out, each with the reason.
	Dropped []Note
	// Left are objects, or parts of them, that the scenario does not carry.
	Left []Note
}

// Options name the scenario.
type Options struct {
	// Name of the scenario, a DNS label. Default: imported.
	Name string
	// From says where the objects came from, for the description.
	From string
}

// Assumed values, each written with a comment that says so.
const (
	assumedServiceTime = "5ms"
	assumedRate        = "20/s"
	assumedDuration    = "5m"
	// grpcLibrary is the library a gRPC caller is given: grpc-go, whose
	// channel keeps one connection as every gRPC library's pick_first does.
	grpcLibrary = "grpc-go"
)

// importer holds one import's state.
type importer struct {
	inv       *inventory.Inventory
	out       *Import
	workloads []*workload
	services  []inventory.Object[*corev1.Service]
	// byService is the scenario name of each Service that selects an imported
	// workload, by namespace/name.
	byService map[string]string
	used      map[string]bool
	// calls are each caller's inferred calls, in the order found.
	calls map[*workload][]Call
}

// Scenario makes a scenario from inv.
func Scenario(inv *inventory.Inventory, opt Options) (*Import, error) {
	im := &importer{inv: inv, out: &Import{}, byService: map[string]string{}, used: map[string]bool{}, calls: map[*workload][]Call{}}
	// Objects are taken in order of name, so that files and a cluster's API
	// server, which lists by name, give the same scenario.
	im.workloads = workloads(inv)
	slices.SortStableFunc(im.workloads, func(a, b *workload) int {
		return cmp.Or(strings.Compare(a.namespace, b.namespace), strings.Compare(a.name, b.name), strings.Compare(a.kind, b.kind))
	})
	im.services = slices.Clone(inv.Services)
	slices.SortStableFunc(im.services, func(a, b inventory.Object[*corev1.Service]) int {
		return cmp.Or(strings.Compare(namespaceOf(a.Object.Namespace), namespaceOf(b.Object.Namespace)), strings.Compare(a.Object.Name, b.Object.Name))
	})
	im.matchServices()
	im.inferCalls()
	im.dropCycles()

	spec := newMapping()
	spec.set("duration", str(assumedDuration), "ASSUMED: long enough for autoscalers to act; lengthen it to see more.")
	spec.set("seed", integer(1))
	if cluster := im.cluster(); len(cluster.node.Content) > 0 {
		spec.set("cluster", cluster.node)
	}
	var services []*yaml.Node
	for _, w := range im.readingOrder() {
		n, err := im.service(w)
		if err != nil {
			return nil, err
		}
		services = append(services, n)
		im.out.Services = append(im.out.Services, w.as)
	}
	if len(services) == 0 {
		return nil, fmt.Errorf("no Deployment or StatefulSet behind a Service was read: a scenario needs at least one service")
	}
	spec.set("services", sequence(services...))
	spec.set("clients", sequence(im.clients()...))
	im.leftovers()

	name := opt.Name
	if name == "" {
		name = "imported"
	}
	meta := newMapping().set("name", str(name))
	desc := fmt.Sprintf("Made by trafficlab import from %s (services %d, clients %d, calls inferred %d).\nValues marked ASSUMED are not in the manifests: measure them and set them.\n",
		opt.From, len(im.out.Services), len(im.out.Clients), len(im.out.Calls))
	meta.set("description", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: desc, Style: yaml.LiteralStyle})
	doc := newMapping().
		set("apiVersion", str(scenario.APIVersion)).
		set("kind", str(scenario.Kind)).
		set("metadata", meta.node).
		set("spec", spec.node)
	im.out.Doc = &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{doc.node}}
	return im.out, nil
}

// WriteYAML writes the scenario.
func (im *Import) WriteYAML(w io.Writer) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(im.Doc); err != nil {
		return err
	}
	return enc.Close()
}

// note records something about the object at src.
func (im *importer) note(src inventory.Source, subject, format string, args ...any) {
	im.out.Left = append(im.out.Left, Note{src, subject, fmt.Sprintf(format, args...)})
}

// matchServices gives each workload the Service in front of it, and names it
// in the scenario after that Service.
func (im *importer) matchServices() {
	matched := map[*corev1.Service]bool{}
	for _, w := range im.workloads {
		if w.kind == "Job" {
			w.as = im.unique(w.name, w.namespace)
			continue
		}
		for _, s := range im.services {
			if !selects(s.Object, w) {
				continue
			}
			matched[s.Object] = true
			if w.service == nil {
				w.service = s.Object
				w.as = im.unique(s.Object.Name, w.namespace)
				if w.as != s.Object.Name {
					im.note(s.Source, "Service "+s.Object.Name, "another namespace has a service of this name: it is %s in the scenario", w.as)
				}
			} else {
				im.note(s.Source, "Service "+s.Object.Name, "selects the pods of %s, which Service %s already fronts: calls to it go to service %s", w, w.service.Name, w.as)
			}
			im.byService[w.namespace+"/"+s.Object.Name] = w.as
		}
		if w.service == nil {
			w.as = im.unique(w.name, w.namespace)
		}
	}
	for _, s := range im.services {
		if !matched[s.Object] {
			why := "selects no Deployment or StatefulSet read"
			if len(s.Object.Spec.Selector) == 0 {
				why = "has no selector (its endpoints are managed by hand): not modelled"
			}
			im.note(s.Source, "Service "+s.Object.Name, "%s", why)
		}
	}
}

// unique is name, or name-namespace when a service or client already has it.
func (im *importer) unique(name, namespace string) string {
	out := name
	for i := 2; im.used[out]; i++ {
		out = fmt.Sprintf("%s-%s", name, namespace)
		if i > 2 {
			out = fmt.Sprintf("%s-%s-%d", name, namespace, i)
		}
		out = strings.TrimRight(out[:min(len(out), 63)], "-")
	}
	im.used[out] = true
	return out
}

// inferCalls finds each workload's calls in its app container's addresses.
func (im *importer) inferCalls() {
	for _, w := range im.workloads {
		c, _ := appContainer(w)
		if c == nil {
			continue
		}
		configMap := func(name string) (map[string]string, bool) {
			for _, cm := range im.inv.ConfigMaps {
				if cm.Object.Name == name && namespaceOf(cm.Object.Namespace) == w.namespace {
					return cm.Object.Data, true
				}
			}
			return nil, false
		}
		seen := map[string]bool{}
		for _, m := range mentions(c, configMap) {
			for _, a := range addresses(m) {
				ns := a.namespace
				if ns == "" {
					ns = w.namespace
				}
				to, ok := im.byService[ns+"/"+a.name]
				if !ok || to == w.as || seen[to] {
					continue
				}
				seen[to] = true
				im.calls[w] = append(im.calls[w], Call{From: w.as, To: to, Where: m.where, Text: a.text, Source: w.source})
			}
		}
	}
}

// dropCycles leaves out each inferred call that would close a cycle of
// services: a scenario's requests must end.
func (im *importer) dropCycles() {
	reaches := func(from, to string) bool {
		seen := map[string]bool{}
		var walk func(string) bool
		walk = func(at string) bool {
			if at == to {
				return true
			}
			if seen[at] {
				return false
			}
			seen[at] = true
			for w, calls := range im.calls {
				if w.as != at {
					continue
				}
				for _, c := range calls {
					if walk(c.To) {
						return true
					}
				}
			}
			return false
		}
		return walk(from)
	}
	for _, w := range im.workloads {
		kept := im.calls[w][:0]
		for _, c := range im.calls[w] {
			if reaches(c.To, c.From) {
				im.out.Dropped = append(im.out.Dropped, Note{c.Source, c.From + " → " + c.To, fmt.Sprintf("closes a cycle of calls (%s=%s); a scenario's requests must end", c.Where, c.Text)})
				continue
			}
			kept = append(kept, c)
		}
		if len(kept) == 0 {
			delete(im.calls, w)
		} else {
			im.calls[w] = kept
		}
		im.out.Calls = append(im.out.Calls, kept...)
	}
}

// readingOrder is the services in the order a request meets them: first the
// ones clients call, then the ones nothing imported calls, each followed by
// what it calls, in its calls' order.
func (im *importer) readingOrder() []*workload {
	var roots, out []*workload
	called := map[string]bool{}
	for _, c := range im.out.Calls {
		if im.callee(c.From) != nil {
			called[c.To] = true
		}
	}
	for _, w := range im.workloads {
		if w.service == nil {
			for _, c := range im.calls[w] {
				roots = append(roots, im.callee(c.To))
			}
		}
	}
	for _, w := range im.workloads {
		if w.service != nil && !called[w.as] {
			roots = append(roots, w)
		}
	}
	seen := map[*workload]bool{}
	var visit func(*workload)
	visit = func(w *workload) {
		if seen[w] {
			return
		}
		seen[w] = true
		out = append(out, w)
		for _, c := range im.calls[w] {
			visit(im.callee(c.To))
		}
	}
	for _, w := range roots {
		visit(w)
	}
	return out
}

// callee is the workload behind scenario service name.
func (im *importer) callee(name string) *workload {
	for _, w := range im.workloads {
		if w.service != nil && w.as == name {
			return w
		}
	}
	return nil
}

// speaksGRPC tells whether the service's Service names its first port gRPC.
func (im *importer) speaksGRPC(name string) bool {
	w := im.callee(name)
	return w != nil && len(w.service.Spec.Ports) > 0 && grpcPort(w.service.Spec.Ports[0])
}

// leftovers lists the objects no service or client carries.
func (im *importer) leftovers() {
	for _, w := range im.workloads {
		if w.service == nil && im.calls[w] == nil {
			im.note(w.source, w.String(), "no Service selects its pods and it names none it calls: not imported")
		}
	}
	for _, p := range im.inv.PDBs {
		im.note(p.Source, "PodDisruptionBudget "+p.Object.Name, "not modelled: nothing in a run evicts pods")
	}
	for _, u := range im.inv.Unread {
		im.note(inventory.Source{}, "not read", "%s", u)
	}
	for _, o := range im.inv.Others {
		im.note(o.Source, fmt.Sprintf("%s %s", o.Kind, o.Name), "a kind the scenario does not model (%s): not imported", o.APIVersion)
	}
	slices.SortStableFunc(im.out.Left, func(a, b Note) int {
		return cmp.Or(strings.Compare(a.Source.File, b.Source.File), cmp.Compare(a.Source.Line, b.Source.Line), cmp.Compare(a.Source.Item, b.Source.Item))
	})
}

// WriteSummary says what the import made: the counts, each inferred call and
// what it was inferred from, the calls dropped and what was not imported.
func (im *Import) WriteSummary(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "imported: services %d, clients %d, calls inferred %d. Values marked ASSUMED are not in the input: measure them and set them.\n",
		len(im.Services), len(im.Clients), len(im.Calls))
	if len(im.Calls) > 0 {
		b.WriteString("calls inferred from the addresses containers are given:\n")
		for _, c := range im.Calls {
			fmt.Fprintf(&b, "  %s → %s  %s=%s  (%s)\n", c.From, c.To, c.Where, c.Text, c.Source)
		}
	}
	if len(im.Dropped) > 0 {
		b.WriteString("calls left out:\n")
		for _, n := range im.Dropped {
			fmt.Fprintf(&b, "  %s: %s  (%s)\n", n.Subject, n.Text, n.Source)
		}
	}
	if len(im.Left) > 0 {
		b.WriteString("not imported, or imported in part:\n")
		for _, n := range im.Left {
			fmt.Fprintf(&b, "  %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
