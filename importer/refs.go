package importer

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// A workload's calls are not written anywhere in Kubernetes: they are inferred
// from what its containers are given, the addresses of other Services in their
// environment and arguments, as a reader of the manifests would infer them.

// mention is one place a container names an address: an environment variable
// (its value, or the ConfigMap key it comes from) or an argument.
type mention struct {
	// where says where the text was found: `env CART_ADDR`, `args[2]`.
	where string
	text  string
	// addressVar is an environment variable whose name says it holds an address
	// (CART_HOST, REDIS_ADDR): only there may a bare name (`cart`) name a Service.
	addressVar bool
}

// addressVarName matches environment variable names that hold an address.
var addressVarName = regexp.MustCompile(`(?i)(ADDR|ADDRESS|HOST|HOSTNAME|URL|URI|ENDPOINT|TARGET|UPSTREAM|BACKEND|SERVER)S?$`)

// mentions lists what c is given, in order: its environment (values, and the
// ConfigMap keys they come from, which configMap looks up), then its command and
// arguments.
func mentions(c *corev1.Container, configMap func(name string) (map[string]string, bool)) []mention {
	var out []mention
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef == nil {
			continue
		}
		data, ok := configMap(from.ConfigMapRef.Name)
		if !ok {
			continue
		}
		for _, k := range sortedKeys(data) {
			out = append(out, mention{fmt.Sprintf("env %s%s (ConfigMap %s)", from.Prefix, k, from.ConfigMapRef.Name), data[k], addressVarName.MatchString(k)})
		}
	}
	for _, e := range c.Env {
		text := e.Value
		where := "env " + e.Name
		if ref := e.ValueFrom; ref != nil && ref.ConfigMapKeyRef != nil {
			data, ok := configMap(ref.ConfigMapKeyRef.Name)
			if !ok {
				continue
			}
			text = data[ref.ConfigMapKeyRef.Key]
			where = fmt.Sprintf("env %s (ConfigMap %s, key %s)", e.Name, ref.ConfigMapKeyRef.Name, ref.ConfigMapKeyRef.Key)
		}
		out = append(out, mention{where, text, addressVarName.MatchString(e.Name)})
	}
	for i, a := range c.Command {
		out = append(out, mention{fmt.Sprintf("command[%d]", i), a, false})
	}
	for i, a := range c.Args {
		out = append(out, mention{fmt.Sprintf("args[%d]", i), a, false})
	}
	return out
}

// address is a Service an address names: its name and, when written, its
// namespace and port.
type address struct {
	name, namespace, port string
	text                  string
}

// scheme is a URL's scheme and slashes, gRPC's dns:/// included.
var scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*://+`)

// addresses finds the Service addresses in m's text: a URL's host
// (http://cart:8080/, dns:///cart:7070), HOST:PORT, a cluster DNS name
// (cart.shop, cart.shop.svc.cluster.local), and, in an address variable, a bare
// name.
func addresses(m mention) []address {
	var out []address
	tokens := strings.FieldsFunc(m.text, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(`,;"'=()[]{}<>|`, r)
	})
	for _, tok := range tokens {
		rest := scheme.ReplaceAllString(tok, "")
		url := rest != tok
		host := rest
		if i := strings.IndexAny(host, "/?#"); i >= 0 {
			host = host[:i]
		}
		if i := strings.LastIndexByte(host, '@'); i >= 0 {
			host = host[i+1:] // user:password@host
		}
		a := address{text: tok}
		if h, p, ok := strings.Cut(host, ":"); ok {
			if p == "" || strings.Trim(p, "0123456789") != "" {
				continue
			}
			host, a.port = h, p
		}
		labels := strings.Split(host, ".")
		a.name = labels[0]
		if len(labels) > 1 {
			a.namespace = labels[1]
			if len(labels) > 2 && labels[2] != "svc" {
				continue // a name outside the cluster: example.com
			}
		}
		if validation.IsDNS1123Label(a.name) != nil || (a.namespace != "" && validation.IsDNS1123Label(a.namespace) != nil) {
			continue
		}
		bare := !url && a.port == "" && a.namespace == ""
		if bare && !(m.addressVar && len(tokens) == 1) {
			continue
		}
		out = append(out, a)
	}
	return out
}
