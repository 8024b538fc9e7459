package scenario

// The decoder is written by hand because neither stock decoder tells users where to look:
// yaml.v3's strict mode (KnownFields) reports the line of an unknown field but no column,
// stops at the first type error, and cannot decode Kubernetes' own types, which
// unmarshal from JSON; sigs.k8s.io/yaml goes through JSON and so loses every position.
// Walking the yaml.Node tree keeps the line and column of every key and value.

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"trafficlab/model/kubeproxy"
)

var (
	durationType    = reflect.TypeFor[metav1.Duration]()
	quantityType    = reflect.TypeFor[resource.Quantity]()
	intOrStringType = reflect.TypeFor[intstr.IntOrString]()

	// scalars are the types written as one string in a syntax of their own: what to
	// ask for when a value has another shape, and the parser.
	scalars = map[reflect.Type]scalar{
		reflect.TypeFor[Rate]():      {"a rate such as 1000/s", func(s string) (any, error) { return ParseRate(s) }},
		reflect.TypeFor[Percent]():   {`a percentage such as "3%"`, func(s string) (any, error) { return ParsePercent(s) }},
		reflect.TypeFor[Bandwidth](): {"a bandwidth such as 100mbit", func(s string) (any, error) { return ParseBandwidth(s) }},
		// Any name reads; validation names the modes when it is none of them.
		reflect.TypeFor[kubeproxy.Mode](): {"a string", func(s string) (any, error) { return kubeproxy.Parse(s), nil }},
	}

	digits = regexp.MustCompile(`^[-+]?[0-9]+$`)
)

// scalar is how a value of one of the scalars types is read.
type scalar struct {
	want  string
	parse func(string) (any, error)
}

// decoder fills Go values from a yaml.Node tree, recording where each value was written
// and collecting every error rather than stopping at the first.
type decoder struct {
	file  string
	sets  map[*yaml.Node]string // nodes written by --set, to the argument that wrote them
	pos   Positions
	diags Diagnostics
	// aliased counts the values reached through aliases (*name), which repeat what
	// their anchor holds: nested, a few kilobytes can stand for billions of values.
	aliased, inAlias int
}

// maxAliasedValues bounds the values aliases may repeat: far more than any anchor
// a scenario reuses (a pod template, a node pool), far fewer than would make
// decoding slow.
const maxAliasedValues = 100_000

// decode fills out, which must be a pointer, from the root node n (a document's content).
func decode(file string, n *yaml.Node, sets map[*yaml.Node]string, out any) (Positions, Diagnostics) {
	d := &decoder{file: file, sets: sets, pos: Positions{file: file, at: map[string]position{}}}
	d.value(n, reflect.ValueOf(out).Elem(), "")
	return d.pos, d.diags
}

func (d *decoder) position(n *yaml.Node) position {
	if set, ok := d.sets[n]; ok {
		return position{Set: set}
	}
	return position{Line: n.Line, Col: n.Column}
}

// errorf reports a problem at node n; a non-empty path prefixes the message.
func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	p := d.position(n)
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	d.diags = append(d.diags, Diagnostic{File: d.file, Line: p.Line, Col: p.Col, Msg: msg, Set: p.Set})
}

// expected reports a node of the wrong shape for the Go value it should fill.
func (d *decoder) expected(n *yaml.Node, path, want string) {
	d.errorf(n, path, "expected %s, got %s", want, describe(n))
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			return fmt.Sprintf("the quoted string %q", n.Value)
		}
		return strconv.Quote(n.Value)
	}
	return "an alias"
}

// isNull reports an explicit or empty YAML null, which leaves a value unset.
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// value records where the value at path was written, then fills v from it.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	if d.aliased > maxAliasedValues {
		return
	}
	if d.inAlias > 0 {
		d.aliased++
	}
	d.pos.at[path] = d.position(n) // an alias counts as written where it is used
	if n.Kind == yaml.AliasNode {
		alias := n
		n = n.Alias
		d.inAlias++
		defer func() {
			d.inAlias--
			if d.inAlias == 0 && d.aliased > maxAliasedValues {
				d.errorf(alias, path, "aliases repeat over %d values here: the document expands too far; write the values out or alias less", maxAliasedValues)
				d.aliased = math.MaxInt // reported once; decoding stops
			}
		}()
	}
	if !isNull(n) {
		d.fill(n, v, path)
	}
}

func (d *decoder) fill(n *yaml.Node, v reflect.Value, path string) {
	switch v.Type() {
	case durationType:
		d.duration(n, v, path)
		return
	case quantityType:
		d.quantity(n, v, path)
		return
	case intOrStringType:
		d.intOrString(n, v, path)
		return
	}
	if sc, ok := scalars[v.Type()]; ok {
		d.scalar(n, v, path, sc)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		// A key that is present allocates its value, so "set" and "unset" stay distinct.
		e := reflect.New(v.Type().Elem())
		d.fill(n, e.Elem(), path)
		v.Set(e)
	case reflect.Struct:
		d.mapping(n, v, path)
	case reflect.Slice:
		d.list(n, v, path)
	case reflect.Map:
		d.stringMap(n, v, path)
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			d.expected(n, path, "a string")
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
			d.expected(n, path, "true or false")
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		d.integer(n, v, path)
	case reflect.Float32, reflect.Float64:
		d.float(n, v, path)
	default:
		// Only a new field of an unsupported type gets here: a programming error.
		panic(fmt.Sprintf("scenario: cannot decode %s at %s", v.Type(), path))
	}
}

// scalar fills a value of a type in scalars with what its parse makes of the text.
func (d *decoder) scalar(n *yaml.Node, v reflect.Value, path string, sc scalar) {
	if n.Kind != yaml.ScalarNode {
		d.expected(n, path, sc.want)
		return
	}
	x, err := sc.parse(n.Value)
	if err != nil {
		d.errorf(n, path, "%v", err)
		return
	}
	v.Set(reflect.ValueOf(x))
}

// list fills a slice from a YAML sequence, each item at path[i].
func (d *decoder) list(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.expected(n, path, "a list")
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		d.value(item, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
	}
	v.Set(s)
}

// integer fills an integer of any size; a string in a field named ...Bytes is a byte
// count with a unit.
func (d *decoder) integer(n *yaml.Node, v reflect.Value, path string) {
	if strings.HasSuffix(path, "Bytes") && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		d.byteCount(n, v, path)
		return
	}
	var i int64
	// YAML resolves integers too large for 64 bits as floats; those are out of range.
	tooBig := n.ShortTag() == "!!float" && digits.MatchString(n.Value)
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" && !tooBig {
		d.expected(n, path, "an integer")
		return
	}
	if n.Decode(&i) != nil || v.OverflowInt(i) {
		d.errorf(n, path, "integer %s is out of range", n.Value)
		return
	}
	v.SetInt(i)
}

// float fills a float with a finite number.
func (d *decoder) float(n *yaml.Node, v reflect.Value, path string) {
	var f float64
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") || n.Decode(&f) != nil {
		d.expected(n, path, "a number")
		return
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		d.errorf(n, path, "expected a finite number, got %s", n.Value)
		return
	}
	v.SetFloat(f)
}

// mapping fills a struct from a YAML mapping, field by field through its yaml tags.
func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.expected(n, path, "a mapping")
		return
	}
	fields := map[string][]int{}
	var names []string
	for _, f := range reflect.VisibleFields(v.Type()) {
		name := fieldName(f)
		if f.Anonymous || name == "" || name == "-" || fields[name] != nil {
			continue // an inlined struct's fields are visible in their own right
		}
		if len(f.Index) > 1 && !inlined(v.Type(), f.Index) {
			continue
		}
		fields[name] = f.Index
		names = append(names, name)
	}
	where := "in " + path
	if path == "" {
		where = "at the top level"
	}
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		if key.Kind != yaml.ScalarNode {
			d.errorf(key, "", "keys must be field names, got %s %s", describe(key), where)
			continue
		}
		if first, dup := seen[key.Value]; dup {
			d.errorf(key, "", "duplicate field %q %s (first at line %d)", key.Value, where, first.Line)
			continue
		}
		seen[key.Value] = key
		f, ok := fields[key.Value]
		if !ok {
			d.errorf(key, "", "unknown field %q %s; known fields: %s", key.Value, where, strings.Join(names, ", "))
			continue
		}
		d.value(val, v.FieldByIndex(f), joinPath(path, key.Value))
	}
}

// inlined tells whether the field at index, in a struct embedded in t, is
// promoted as encoding/json promotes it, and so Kubernetes' JSON: every struct
// on the way embedded by value without a name of its own (a probe's handler,
// ProbeHandler).
func inlined(t reflect.Type, index []int) bool {
	for _, i := range index[:len(index)-1] {
		f := t.Field(i)
		if !f.Anonymous || f.Type.Kind() != reflect.Struct || fieldName(f) != "" {
			return false
		}
		t = f.Type
	}
	return true
}

// fieldName is a struct field's key: its yaml tag, or else its json tag, which is how
// Kubernetes' own types (an autoscaling/v2 HPA spec) name their fields.
func fieldName(f reflect.StructField) string {
	tag, ok := f.Tag.Lookup("yaml")
	if !ok {
		tag = f.Tag.Get("json")
	}
	name, _, _ := strings.Cut(tag, ",")
	return name
}

// stringMap fills a map with string keys, such as a label selector's matchLabels.
func (d *decoder) stringMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode || v.Type().Key().Kind() != reflect.String {
		d.expected(n, path, "a mapping")
		return
	}
	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		if key.Kind != yaml.ScalarNode {
			d.errorf(key, path, "keys must be strings, got %s", describe(key))
			continue
		}
		e := reflect.New(v.Type().Elem()).Elem()
		d.value(val, e, path+"."+key.Value)
		m.SetMapIndex(reflect.ValueOf(key.Value).Convert(v.Type().Key()), e)
	}
	v.Set(m)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// duration parses Kubernetes' duration syntax, which is Go's: 250us, 10ms, 1m30s.
func (d *decoder) duration(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode {
		d.expected(n, path, "a duration such as 10ms")
		return
	}
	dur, err := time.ParseDuration(n.Value)
	if err != nil {
		if _, numErr := strconv.ParseFloat(n.Value, 64); numErr == nil {
			d.errorf(n, path, "invalid duration %q: durations need a unit, e.g. 10ms", n.Value)
		} else {
			d.errorf(n, path, "invalid duration %q: want a number and a unit (ns, us, ms, s, m, h), e.g. 250us, 10ms, 1m30s", n.Value)
		}
		return
	}
	if dur < 0 {
		d.errorf(n, path, "negative duration %s", n.Value)
		return
	}
	if dur > maxDuration {
		d.errorf(n, path, "duration %s is over the limit of %.0fh (a year); no run is longer", n.Value, maxDuration.Hours())
		return
	}
	v.Set(reflect.ValueOf(metav1.Duration{Duration: dur}))
}

// quantity parses a Kubernetes resource quantity: 500m, 2, 20Mi.
// intOrString reads Kubernetes' int-or-string fields (maxSurge: 1 or "25%"), as its
// UnmarshalJSON does: a number is an int32, anything else a string.
func (d *decoder) intOrString(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode {
		d.expected(n, path, `a number or a percentage such as "25%"`)
		return
	}
	if n.ShortTag() != "!!int" {
		v.Set(reflect.ValueOf(intstr.FromString(n.Value)))
		return
	}
	var i int32
	if n.Decode(&i) != nil {
		d.errorf(n, path, "integer %s is out of range", n.Value)
		return
	}
	v.Set(reflect.ValueOf(intstr.FromInt32(i)))
}

func (d *decoder) quantity(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode {
		d.expected(n, path, "a quantity such as 500m")
		return
	}
	q, err := resource.ParseQuantity(n.Value)
	if err != nil {
		d.errorf(n, path, "invalid quantity %q: want a Kubernetes quantity such as 500m, 2 or 20Mi", n.Value)
		return
	}
	if q.Sign() < 0 {
		d.errorf(n, path, "negative quantity %s", n.Value)
		return
	}
	v.Set(reflect.ValueOf(q))
}

// byteCount parses a size in bytes written as a Kubernetes quantity (16Ki, 1M), as
// sizes are everywhere in Kubernetes; a plain integer is decoded as any other.
func (d *decoder) byteCount(n *yaml.Node, v reflect.Value, path string) {
	q, err := resource.ParseQuantity(n.Value)
	if err != nil {
		d.errorf(n, path, "invalid size %q: want a number of bytes or a Kubernetes quantity such as 16Ki or 1M", n.Value)
		return
	}
	i, ok := q.AsInt64()
	if !ok || v.OverflowInt(i) {
		d.errorf(n, path, "invalid size %q: not a whole number of bytes in range", n.Value)
		return
	}
	v.SetInt(i)
}
