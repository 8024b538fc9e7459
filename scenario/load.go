package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// position is where a value was written: a line and column, or a --set argument.
type position struct {
	Line, Col int
	Set       string
}

// Positions records where each value of a loaded scenario was written, by field path:
// "spec.duration", "spec.clients[0].target", "spec.services[1].pod.cpu". Mappings and
// lists have positions too ("spec.clients[0]"), so a missing field can point at its parent.
type Positions struct {
	file string
	at   map[string]position
}

// Lookup returns the line and column of the value at path. ok is false when the path
// was not written in the file: absent, or set by --set.
func (p Positions) Lookup(path string) (line, col int, ok bool) {
	at, ok := p.at[path]
	if !ok || at.Set != "" {
		return 0, 0, false
	}
	return at.Line, at.Col, true
}

// Diag makes a diagnostic about the field at path, prefixed with the path. It points at
// the field, or where the field is absent at its nearest written parent, and names the
// --set argument if that is where the value came from.
func (p Positions) Diag(sev Severity, path, msg string) Diagnostic {
	if path != "" {
		msg = path + ": " + msg
	}
	d := Diagnostic{File: p.file, Severity: sev, Msg: msg}
	for at := path; ; at = parentPath(at) {
		if pos, ok := p.at[at]; ok {
			d.Line, d.Col, d.Set = pos.Line, pos.Col, pos.Set
			return d
		}
		if at == "" {
			return d
		}
	}
}

// Locate is the diagnostic of the FieldError that err is or wraps, at its field as
// Diag points; false when err holds none.
func (p Positions) Locate(err error) (Diagnostic, bool) {
	var fe *FieldError
	if !errors.As(err, &fe) {
		return Diagnostic{}, false
	}
	return p.Diag(Error, fe.Path, fe.Err.Error()), true
}

// parentPath strips the last key or index from a path: a.b[0].c → a.b[0] → a.b → a → "".
func parentPath(path string) string {
	if i := strings.LastIndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return ""
}

// Load parses, overrides, defaults and validates one scenario document. file names the
// document in diagnostics; sets are --set PATH=VALUE arguments, applied in order. The
// scenario is nil when any diagnostic is an error; warnings come back either way.
func Load(file string, data []byte, sets []string) (*Scenario, Positions, Diagnostics) {
	root, diag := parse(file, data)
	if diag != nil {
		return nil, Positions{file: file}, Diagnostics{*diag}
	}
	var diags Diagnostics
	marks := map[*yaml.Node]string{}
	for _, s := range sets {
		if err := applySet(root, s, marks); err != nil {
			diags = append(diags, Diagnostic{File: file, Msg: err.Error(), Set: s})
		}
	}
	var sc Scenario
	pos, decodeDiags := decode(file, root, marks, &sc)
	diags = append(diags, decodeDiags...)
	// Validating a half-decoded scenario would only repeat the decoding errors in other
	// words ("threads: expected an integer", then "needs threads or rate").
	if !diags.HasErrors() {
		setDefaults(&sc)
		diags = append(diags, validate(&sc, pos)...)
	}
	diags.sort()
	if diags.HasErrors() {
		return nil, pos, diags
	}
	return &sc, pos, diags
}

// LoadFile reads and loads the scenario file at path.
func LoadFile(path string, sets []string) (*Scenario, Positions, Diagnostics) {
	data, diags := ReadFile(path)
	if diags != nil {
		return nil, Positions{file: path}, diags
	}
	return Load(path, data, sets)
}

// ReadFile reads a scenario file for Load, with a read error as the diagnostic
// LoadFile gives: for callers that load one document several times (a sweep).
func ReadFile(path string) ([]byte, Diagnostics) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is already the diagnostic's file
		}
		return nil, Diagnostics{{File: path, Msg: err.Error()}}
	}
	return data, nil
}

const emptyMsg = "empty file: want a Scenario document (apiVersion: " + APIVersion + ", kind: " + Kind + ")"

var (
	// yamlLine matches yaml.v3's syntax errors, which carry a line but no column.
	yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	// tabIndent finds a line indented with a tab, which YAML forbids.
	tabIndent = regexp.MustCompile(`(?m)^ *\t`)
)

// parse reads the one YAML document of data and returns its root node.
func parse(file string, data []byte) (*yaml.Node, *Diagnostic) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, &Diagnostic{File: file, Line: 1, Col: 1, Msg: emptyMsg}
		}
		return nil, syntaxError(file, data, err)
	}
	if d := kubernetesObject(file, doc.Content[0]); d != nil {
		return nil, d
	}
	for {
		var next yaml.Node
		err := dec.Decode(&next)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, syntaxError(file, data, err)
		}
		// A trailing "---" makes an empty document, which is harmless.
		if !isNull(next.Content[0]) {
			return nil, &Diagnostic{File: file, Line: next.Line, Col: next.Column, Msg: "a second YAML document: a scenario file holds one document"}
		}
	}
	if isNull(doc.Content[0]) {
		return nil, &Diagnostic{File: file, Line: 1, Col: 1, Msg: emptyMsg}
	}
	return doc.Content[0], nil
}

// A Kubernetes object's apiVersion (v1, apps/v1, networking.istio.io/v1beta1) and
// kind (Deployment).
var (
	kubernetesAPIVersion = regexp.MustCompile(`^([a-z0-9.-]+/)?v[0-9]+((alpha|beta)[0-9]+)?$`)
	kubernetesKind       = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
)

// kubernetesObject is the diagnostic for a document that is a Kubernetes object
// rather than a scenario (a Deployment, or the first object of a manifest file):
// its fields would otherwise come back as a page of unknown-field errors.
func kubernetesObject(file string, n *yaml.Node) *Diagnostic {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	var apiVersion, kind *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch n.Content[i].Value {
		case "apiVersion":
			apiVersion = n.Content[i+1]
		case "kind":
			kind = n.Content[i+1]
		}
	}
	if apiVersion == nil || kind == nil || kind.Value == Kind || !kubernetesKind.MatchString(kind.Value) ||
		!kubernetesAPIVersion.MatchString(apiVersion.Value) || strings.HasPrefix(apiVersion.Value, "trafficlab/") {
		return nil
	}
	return &Diagnostic{File: file, Line: kind.Line, Col: kind.Column,
		Msg: fmt.Sprintf("this is a %s (%s), not a Scenario: run `trafficlab import -f %s` to make a scenario from it", kind.Value, apiVersion.Value, file)}
}

func syntaxError(file string, data []byte, err error) *Diagnostic {
	d := &Diagnostic{File: file, Line: 1, Col: 1, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		d.Line, _ = strconv.Atoi(m[1])
		d.Msg = m[2]
	}
	// A tab in the indentation is the usual cause of this puzzling message.
	if strings.Contains(d.Msg, "cannot start any token") && tabIndent.Match(data) {
		d.Msg += " (YAML does not allow tabs for indentation)"
	}
	d.Msg = "invalid YAML: " + d.Msg
	return d
}
