package reference

import (
	"fmt"
	"reflect"
	"strings"
)

// anchor is the GitHub heading anchor of a type's section.
func anchor(t reflect.Type) string { return "#" + strings.ToLower(t.Name()) }

// kubernetesLink names one of Kubernetes' types and links its Go documentation, where
// every field is described.
func kubernetesLink(t reflect.Type) string {
	group := t.PkgPath()
	if i := strings.LastIndex(group, "/"); i >= 0 {
		if j := strings.LastIndex(group[:i], "/"); j >= 0 {
			group = group[j+1:]
		}
	}
	return fmt.Sprintf("Kubernetes [%s %s](https://pkg.go.dev/%s#%s)", group, t.Name(), t.PkgPath(), t.Name())
}

// scenarioType describes the value a scenario key takes, with its unit where the key's
// name or type says it.
func scenarioTypeText(f Field) string {
	t := f.Type
	list := ""
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		if t.Kind() == reflect.Slice {
			list += "list of "
		}
		t = t.Elem()
	}
	name := f.GoName
	var s string
	switch {
	case t == durationType:
		s = "duration"
	case t == quantityType && strings.HasSuffix(name, "BytesPerSecond"):
		s = "quantity, bytes/s"
	case t == quantityType && strings.HasPrefix(name, "CPU"):
		s = "quantity, cores"
	case t == quantityType:
		s = "quantity"
	case t == intOrStringType:
		s = "integer or percentage"
	case t == rateType:
		s = "rate"
	case t == percentType:
		s = "percentage"
	case t == bandwidthType:
		s = "bandwidth"
	case isString(t):
		s = "string"
	case own(t):
		s = fmt.Sprintf("[%s](%s)", t.Name(), anchor(t))
	case t.Kind() == reflect.Struct:
		s = kubernetesLink(t)
	case t.Kind() == reflect.Map:
		s = "map of string to " + t.Elem().Kind().String()
	case t.Kind() == reflect.Bool:
		s = "boolean"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		s = "number"
	case isInt(t) && strings.HasSuffix(f.Key, "Bytes"): // as the decoder reads sizes
		s = "integer or quantity, bytes"
	case isInt(t) && strings.HasSuffix(name, "Seconds"):
		s = "integer, seconds"
	case isInt(t):
		s = "integer"
	default:
		s = t.String()
	}
	return list + s
}

func isInt(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// resultTypeText describes a Result value: its JSON type, null where it may be, and the
// unit its key's suffix states.
func resultTypeText(f Field) string {
	t := f.Type
	nullable := false
	list := ""
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		if t.Kind() == reflect.Pointer {
			nullable = true
		} else {
			list += "list of "
		}
		t = t.Elem()
	}
	var s string
	switch {
	case own(t):
		s = fmt.Sprintf("[%s](%s)", t.Name(), anchor(t))
	case t.Kind() == reflect.Map:
		s = "object: name → " + jsonKind(t.Elem())
	default:
		s = jsonKind(t)
	}
	s = list + s
	if nullable && !own(t) {
		s += " or null"
	}
	if u := resultUnit(f.Key); u != "" {
		s += ", " + u
	}
	return s
}

func jsonKind(t reflect.Type) string {
	switch {
	case isString(t):
		return "string"
	case t.Kind() == reflect.Bool:
		return "boolean"
	case isInt(t):
		return "integer"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "number"
	case own(t):
		return fmt.Sprintf("[%s](%s)", t.Name(), anchor(t))
	}
	return t.String()
}

// resultUnit is the unit a Result key's name states.
func resultUnit(key string) string {
	switch {
	case strings.HasSuffix(key, "_ms"):
		return "milliseconds"
	case strings.HasSuffix(key, "_s"):
		return "seconds"
	case strings.HasSuffix(key, "_rps"):
		return "requests/s"
	case strings.HasSuffix(key, "_bytes"):
		return "bytes"
	case strings.HasSuffix(key, "_bytes_per_second"):
		return "bytes/s"
	case strings.HasSuffix(key, "_cores"):
		return "cores"
	case strings.HasSuffix(key, "utilization") || strings.HasSuffix(key, "share") || strings.HasPrefix(key, "share_"):
		return "fraction 0..1"
	}
	return ""
}

// cell makes text safe for a Markdown table cell.
func cell(s string) string {
	s = oneLine(s)
	s = strings.ReplaceAll(s, "|", `\|`)
	if s == "" {
		return "—"
	}
	return s
}

// paragraphs renders a type's doc comment: paragraphs joined into lines, indented
// blocks as code.
func paragraphs(b *strings.Builder, doc string) {
	if doc == "" {
		return
	}
	var para, code []string
	flush := func() {
		if len(para) > 0 {
			b.WriteString(strings.Join(para, " ") + "\n\n")
			para = nil
		}
		if len(code) > 0 {
			b.WriteString("```\n" + strings.Join(code, "\n") + "\n```\n\n")
			code = nil
		}
	}
	for _, line := range strings.Split(doc, "\n") {
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case strings.HasPrefix(line, "\t") || strings.HasPrefix(line, " "):
			if len(para) > 0 {
				flush()
			}
			code = append(code, strings.TrimPrefix(strings.TrimPrefix(line, "\t"), " "))
		default:
			if len(code) > 0 {
				flush()
			}
			para = append(para, strings.TrimSpace(line))
		}
	}
	flush()
}

func usedAt(b *strings.Builder, s *Struct) {
	var paths []string
	for _, p := range s.UsedAt {
		if p == "" {
			p = "(the document)"
		}
		paths = append(paths, "`"+p+"`")
	}
	b.WriteString("At " + strings.Join(paths, ", ") + ".\n\n")
}

// ScenarioMarkdown is docs/scenario.md.
func ScenarioMarkdown(c Comments) []byte {
	enums := Enums()
	var b strings.Builder
	b.WriteString(`# Scenario reference

<!-- Generated by ` + "`go run ./cmd/docgen`" + ` from the doc comments in scenario/. Do not edit. -->

A scenario is one YAML document. This page lists every key it takes, by type: each
section is one type, the places it appears, and its keys with their type, their
default and what they mean. Keys are exact (the decoder refuses unknown ones, with the
line and column); where a type is Kubernetes' own (a Pod's affinity, an HPA's metrics),
its keys are Kubernetes' and the link describes them.

Values written in a syntax of their own:

| type | syntax | examples |
|---|---|---|
| duration | Go's and Kubernetes' durations: a number and a unit (ns, us, ms, s, m, h), never negative | ` + "`250us`, `10ms`, `1m30s`, `0`" + ` |
| quantity | a Kubernetes resource quantity: CPU in cores or millicores, bytes with a suffix | ` + "`500m`, `2`, `20Mi`" + ` |
| rate | NUMBER/UNIT with unit s, m or h; greater than 0 | ` + "`1000/s`, `60/m`, `2.5/s`" + ` |
| percentage | a number and the percent sign, 0% to 100% (a bare number is refused) | ` + "`\"3%\"`, `\"0.5%\"`" + ` |
| bandwidth | as tc writes it: bit, kbit, mbit, gbit, tbit are bits/s; bps, kbps, mbps, gbps, tbps are BYTES/s | ` + "`100mbit`, `1gbit`, `10mbps`" + ` |
| integer or quantity, bytes | a number of bytes, or a quantity | ` + "`200`, `16Ki`, `1M`" + ` |

A default marked "unset:" is what leaving the key out means. Every ` + "`--set`" + ` path
(` + "`spec.services[0].replicas`" + `) follows these keys.

Editors: ` + "`docs/scenario.schema.json`" + ` (also printed by ` + "`trafficlab schema`" + `) is a
JSON Schema of this document. With the YAML language server (VS Code's YAML
extension, and others), a first line

    # yaml-language-server: $schema=../docs/scenario.schema.json

(the path relative to the scenario file) gives completion, these descriptions on
hover, and checks of names and syntax as you type; ` + "`trafficlab validate`" + ` still
checks what a schema cannot (references between keys, bounds that depend on others).

To regenerate this page after changing a type or a doc comment: ` + "`go run ./cmd/docgen`" + `.

`)
	for _, s := range structs(c, scenarioType) {
		fmt.Fprintf(&b, "## %s\n\n", s.Type.Name())
		paragraphs(&b, s.Doc)
		usedAt(&b, s)
		b.WriteString("| key | type | default | meaning |\n|---|---|---|---|\n")
		for _, f := range s.Fields {
			typ := scenarioTypeText(f)
			if vals := enums[typeKey(s.Type)+"."+f.GoName]; len(vals) > 0 {
				typ += ": " + quoteAll(vals)
			}
			def := defaultOf(f.Doc)
			if required(f.Doc) {
				def = "**required**"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.Key, cell(typ), cell(def), cell(keyed(f.Doc, f.GoName, f.Key)))
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

func quoteAll(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = "`" + v + "`"
	}
	return strings.Join(q, ", ")
}

// ResultMarkdown is docs/result.md.
func ResultMarkdown(c Comments) []byte {
	var b strings.Builder
	b.WriteString(`# Result reference

<!-- Generated by ` + "`go run ./cmd/docgen`" + ` from the doc comments in result/. Do not edit. -->

Every engine (` + "`simulate`, `emulate`" + `) fills a Result, and every report reads only a
Result: ` + "`-o json`" + ` writes it, ` + "`report`" + ` and ` + "`compare`" + ` read it back.
` + "`sweep -o json`" + ` writes a Sweep. Key names are a public interface: keys are added,
never renamed. Keys marked optional are left out when empty; a type "or null" is null
when it has no value (a pod never ready has ` + "`ready_s: null`" + `). Units are in the key's
name: ` + "`_ms`" + ` milliseconds, ` + "`_s`" + ` seconds (from the start of the run for
instants), ` + "`_rps`" + ` requests per second; utilizations and shares are fractions from 0 to 1.

To regenerate this page after changing a type or a doc comment: ` + "`go run ./cmd/docgen`" + `.

`)
	for _, s := range structs(c, resultTypes...) {
		fmt.Fprintf(&b, "## %s\n\n", s.Type.Name())
		paragraphs(&b, s.Doc)
		usedAt(&b, s)
		b.WriteString("| key | type | meaning |\n|---|---|---|\n")
		for _, f := range s.Fields {
			typ := resultTypeText(f)
			if f.OmitEmpty {
				typ += " (optional)"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f.Key, cell(typ), cell(keyed(f.Doc, f.GoName, f.Key)))
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}
