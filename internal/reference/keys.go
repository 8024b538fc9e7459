package reference

import (
	"reflect"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"trafficlab/model/kubeproxy"
	"trafficlab/result"
	"trafficlab/scenario"
)

var (
	durationType    = reflect.TypeFor[metav1.Duration]()
	quantityType    = reflect.TypeFor[resource.Quantity]()
	intOrStringType = reflect.TypeFor[intstr.IntOrString]()
	rateType        = reflect.TypeFor[scenario.Rate]()
	percentType     = reflect.TypeFor[scenario.Percent]()
	bandwidthType   = reflect.TypeFor[scenario.Bandwidth]()
	// modeType is written as its name, one of a fixed set, as a string key is.
	modeType = reflect.TypeFor[kubeproxy.Mode]()

	// ScenarioType and ResultTypes are the roots of the documents described.
	scenarioType = reflect.TypeFor[scenario.Scenario]()
	resultTypes  = []reflect.Type{reflect.TypeFor[result.Result](), reflect.TypeFor[result.Sweep]()}
)

// Struct is one struct type of a document: its doc comment, its keys and the paths
// where it appears.
type Struct struct {
	Type   reflect.Type
	Doc    string
	Fields []Field
	UsedAt []string
}

// Field is one key of a struct.
type Field struct {
	Key       string
	GoName    string
	Type      reflect.Type
	Doc       string
	OmitEmpty bool
}

// typeKey names a type as Comments keys it.
func typeKey(t reflect.Type) string { return t.PkgPath() + "." + t.Name() }

// own reports whether t is one of trafficlab's struct types, documented here, rather
// than Kubernetes' or a scalar.
func own(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && strings.HasPrefix(t.PkgPath(), "trafficlab/") && !scalarType(t)
}

// scalarType reports the struct types written as one scalar.
func scalarType(t reflect.Type) bool {
	switch t {
	case durationType, quantityType, intOrStringType, rateType, percentType, bandwidthType, modeType:
		return true
	}
	return false
}

// isString reports the types written as a plain string: strings, and the types that
// read their value from one (a kube-proxy mode).
func isString(t reflect.Type) bool { return t.Kind() == reflect.String || t == modeType }

// keyOf is a struct field's key as the scenario decoder reads it: its yaml tag, or else
// its json tag (Kubernetes' types, the Result). "" or "-" means no key.
func keyOf(f reflect.StructField) (key string, omitEmpty bool) {
	tag, ok := f.Tag.Lookup("yaml")
	if !ok {
		tag = f.Tag.Get("json")
	}
	name, opts, _ := strings.Cut(tag, ",")
	return name, strings.Contains(opts, "omitempty")
}

// base strips pointers, lists and maps down to the type of the value inside.
func base(t reflect.Type) reflect.Type {
	for {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map:
			t = t.Elem()
		default:
			return t
		}
	}
}

// suffix is what a value of type t adds to the path of the key holding it.
func suffix(t reflect.Type) string {
	s := ""
	for {
		switch t.Kind() {
		case reflect.Pointer:
			t = t.Elem()
		case reflect.Slice:
			s, t = s+"[]", t.Elem()
		case reflect.Map:
			s, t = s+".NAME", t.Elem()
		default:
			return s
		}
	}
}

// structs lists the documented struct types reachable from roots, in the order they
// are first met (depth first, fields in declaration order), with their comments.
func structs(c Comments, roots ...reflect.Type) []*Struct {
	var out []*Struct
	seen := map[reflect.Type]*Struct{}
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		if s, ok := seen[t]; ok {
			s.UsedAt = append(s.UsedAt, path)
			return
		}
		td := c[typeKey(t)]
		s := &Struct{Type: t, Doc: td.Doc, UsedAt: []string{path}}
		seen[t] = s
		out = append(out, s)
		for i := range t.NumField() {
			f := t.Field(i)
			key, omit := keyOf(f)
			if key == "" || key == "-" {
				continue
			}
			s.Fields = append(s.Fields, Field{Key: key, GoName: f.Name, Type: f.Type, Doc: td.Fields[f.Name], OmitEmpty: omit})
		}
		for _, f := range s.Fields {
			if b := base(f.Type); own(b) {
				walk(b, joinPath(path, f.Key)+suffix(f.Type))
			}
		}
	}
	for _, r := range roots {
		walk(r, "")
	}
	return out
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// The fixed forms a field's doc comment states its default or that it is required in.
var (
	defaultSentence  = regexp.MustCompile(`(?:^|\s)Default: (.+?)\.(?:\s|$)`)
	unsetSentence    = regexp.MustCompile(`(?:^|\s)Unset: (.+?)\.(?:\s|$)`)
	requiredSentence = regexp.MustCompile(`(?:^|\s)Required\.(?:\s|$)`)
)

// defaultOf is the default a doc comment states ("Default: 1s."), or what leaving the
// key out means ("Unset: unlimited.").
func defaultOf(doc string) string {
	doc = oneLine(doc)
	if m := defaultSentence.FindStringSubmatch(doc); m != nil {
		return m[1]
	}
	if m := unsetSentence.FindStringSubmatch(doc); m != nil {
		return "unset: " + m[1]
	}
	return ""
}

// required reports whether a doc comment says its key is required.
func required(doc string) bool { return requiredSentence.MatchString(oneLine(doc)) }

// oneLine joins a comment's lines into one.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// keyed replaces the Go field name a doc comment starts with by the key a user
// writes: "ProxyMode is ..." reads "proxyMode is ...".
func keyed(doc, goName, key string) string {
	if rest, ok := strings.CutPrefix(doc, goName); ok && (rest == "" || rest[0] == ' ' || rest[0] == ':') {
		return key + rest
	}
	return doc
}
