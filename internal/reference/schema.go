package reference

import (
	"encoding/json"
	"reflect"
	"strings"
)

// The syntaxes of the scalars the scenario writes in its own ways, as ECMA-262 patterns
// (JSON Schema's), which Go's regexp reads alike. TestPatternsAgreeWithTheParsers holds
// them to the parsers.
const (
	number = `\+?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?`
	// time.ParseDuration: one or more number-unit pairs, or a bare 0; the decoder refuses
	// negative durations.
	durationPattern = `^\+?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// resource.ParseQuantity's syntax (k8s.io/apimachinery quantity.go), without the
	// minus sign the decoder refuses.
	quantityPattern = `^\+?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE][-+]?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`
	// scenario.ParseRate: NUMBER/UNIT.
	ratePattern = `^` + number + `/(s|m|h)$`
	// scenario.ParsePercent: a number and the sign.
	percentPattern = `^` + number + `%$`
	// scenario.ParseBandwidth: tc's units, any case.
	bandwidthPattern = `^` + number + `([kKmMgGtT]?[bB][iI][tT]|[kKmMgGtT]?[bB][pP][sS])$`
)

// SchemaURI is the JSON Schema dialect emitted: draft-07, the one the YAML language
// server supports fully.
const SchemaURI = "http://json-schema.org/draft-07/schema#"

// Schema is a JSON Schema of the scenario: every key, the doc comments as
// descriptions, validation's fixed sets as enums, and the scalar syntaxes as patterns.
func Schema(c Comments) []byte {
	g := &schemaGen{c: c, enums: Enums(), defs: map[string]any{}}
	root := g.structSchema(scenarioType)
	root["$schema"] = SchemaURI
	root["title"] = "trafficlab scenario"
	root["definitions"] = g.defs
	out, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		panic(err) // maps of strings, bools and lists always marshal
	}
	return append(out, '\n')
}

type schemaGen struct {
	c     Comments
	enums map[string][]string
	defs  map[string]any
}

// defName names a type's definition: its own name for trafficlab's types, the API
// group and version first for Kubernetes' (core.v1.Affinity).
func defName(t reflect.Type) string {
	if own(t) {
		return t.Name()
	}
	parts := strings.Split(t.PkgPath(), "/")
	if len(parts) >= 2 {
		return parts[len(parts)-2] + "." + parts[len(parts)-1] + "." + t.Name()
	}
	return t.Name()
}

// structSchema describes a struct: its keys, none other.
func (g *schemaGen) structSchema(t reflect.Type) map[string]any {
	td := g.c[typeKey(t)]
	props := map[string]any{}
	var req []string
	for i := range t.NumField() {
		f := t.Field(i)
		key, _ := keyOf(f)
		if key == "" || key == "-" {
			continue
		}
		doc := td.Fields[f.Name]
		s := g.valueSchema(f.Type, key, typeKey(t)+"."+f.Name)
		if doc != "" {
			s = describe(s, description(keyed(doc, f.Name, key)))
		}
		props[key] = s
		if required(doc) {
			req = append(req, key)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if td.Doc != "" {
		s["description"] = description(td.Doc)
	}
	if len(req) > 0 {
		s["required"] = req
	}
	return s
}

// describe adds a description to a schema; a reference goes under allOf, since
// draft-07 ignores the keywords beside a $ref.
func describe(s map[string]any, desc string) map[string]any {
	if _, ref := s["$ref"]; ref {
		return map[string]any{"description": desc, "allOf": []any{s}}
	}
	s["description"] = desc
	return s
}

// description is a doc comment as a description: paragraphs of one line each.
func description(doc string) string {
	var paras []string
	for _, p := range strings.Split(doc, "\n\n") {
		paras = append(paras, oneLine(p))
	}
	return strings.Join(paras, "\n\n")
}

// valueSchema describes a value of type t held by the key name, whose fixed set
// of values, if any, is enums[field].
func (g *schemaGen) valueSchema(t reflect.Type, name, field string) map[string]any {
	switch t {
	case durationType:
		return map[string]any{"type": []string{"string", "integer"}, "pattern": durationPattern, "minimum": 0, "maximum": 0}
	case quantityType:
		return map[string]any{"type": []string{"string", "number"}, "pattern": quantityPattern, "minimum": 0}
	case intOrStringType:
		return map[string]any{"type": []string{"string", "integer"}}
	case rateType:
		return map[string]any{"type": "string", "pattern": ratePattern}
	case percentType:
		return map[string]any{"type": "string", "pattern": percentPattern}
	case bandwidthType:
		return map[string]any{"type": "string", "pattern": bandwidthPattern}
	}
	if isString(t) {
		s := map[string]any{"type": "string"}
		if vals := g.enums[field]; len(vals) > 0 {
			s["enum"] = vals
		}
		return s
	}
	switch t.Kind() {
	case reflect.Pointer:
		return g.valueSchema(t.Elem(), name, field)
	case reflect.Slice:
		return map[string]any{"type": "array", "items": g.valueSchema(t.Elem(), name, field)}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.valueSchema(t.Elem(), "", "")}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Struct:
		n := defName(t)
		if _, ok := g.defs[n]; !ok {
			g.defs[n] = nil // reserved: types may refer to themselves
			g.defs[n] = g.structSchema(t)
		}
		return map[string]any{"$ref": "#/definitions/" + n}
	}
	if isInt(t) {
		if strings.HasSuffix(name, "Bytes") {
			// The decoder reads a string in a key ending in Bytes as a quantity (16Ki).
			return map[string]any{"type": []string{"integer", "string"}, "pattern": quantityPattern}
		}
		return map[string]any{"type": "integer"}
	}
	return map[string]any{}
}
