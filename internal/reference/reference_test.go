package reference

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"trafficlab/scenario"
)

const moduleRoot = "../.."

func sourceComments(t *testing.T) Comments {
	t.Helper()
	c := Comments{}
	for _, d := range documented {
		pc, err := ParseComments(filepath.Join(moduleRoot, d.dir), d.pkg)
		if err != nil {
			t.Fatal(err)
		}
		c.Merge(pc)
	}
	return c
}

// Every key of the scenario and of the Result is documented where it is declared.
func TestEveryFieldHasADocComment(t *testing.T) {
	c := sourceComments(t)
	for _, root := range [][]reflect.Type{{scenarioType}, resultTypes} {
		for _, s := range structs(c, root...) {
			if _, ok := c[typeKey(s.Type)]; !ok {
				t.Errorf("%s: no source found for the type", typeKey(s.Type))
				continue
			}
			if s.Doc == "" {
				t.Errorf("type %s has no doc comment", typeKey(s.Type))
			}
			for _, f := range s.Fields {
				if f.Doc == "" {
					t.Errorf("%s.%s (key %q, at %s) has no doc comment: say what it means, its unit and its default", typeKey(s.Type), f.GoName, f.Key, s.UsedAt[0])
				}
			}
		}
	}
}

// The committed reference is what the generator makes from today's types and comments.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	outs, err := Generate(moduleRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		have, err := os.ReadFile(filepath.Join(moduleRoot, o.Path))
		if err != nil {
			t.Errorf("%s: %v; run `go run ./cmd/docgen`", o.Path, err)
			continue
		}
		if !bytes.Equal(have, o.Data) {
			t.Errorf("%s is stale: the types or their doc comments changed; run `go run ./cmd/docgen` and commit the result", o.Path)
		}
	}
}

// `trafficlab schema` builds the schema from the copied comments; it must be the
// committed one.
func TestSchemaFromGeneratedCommentsIsTheCommittedOne(t *testing.T) {
	have, err := os.ReadFile(filepath.Join(moduleRoot, "docs/scenario.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(Schema(Generated()), have) {
		t.Error("Schema(Generated()) differs from docs/scenario.schema.json; run `go run ./cmd/docgen`")
	}
}

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema(Generated())))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("scenario.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("scenario.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// asJSON turns a YAML document into the value a JSON Schema validator checks, as the
// YAML language server does.
func asJSON(t *testing.T, data []byte) any {
	t.Helper()
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Every example validates against the schema, and points an editor at it.
func TestExamplesValidateAgainstTheSchema(t *testing.T) {
	sch := compileSchema(t)
	files, _ := filepath.Glob(filepath.Join(moduleRoot, "examples", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no examples found")
	}
	const first = "# yaml-language-server: $schema=../docs/scenario.schema.json\n"
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, []byte(first)) {
			t.Errorf("%s: first line is not %q", filepath.Base(f), strings.TrimSpace(first))
		}
		if err := sch.Validate(asJSON(t, data)); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
}

// The schema refuses what the decoder refuses for the reasons a schema can see: an
// unknown key, a value outside a fixed set, a scalar in the wrong syntax.
func TestSchemaRefusesWhatTheDecoderRefuses(t *testing.T) {
	sch := compileSchema(t)
	base := "apiVersion: trafficlab/v1alpha1\nkind: Scenario\nmetadata: {name: x}\nspec:\n  duration: 10s\n"
	for _, tc := range []struct{ name, yaml string }{
		{"unknown key", "  colour: blue\n"},
		{"proxy mode outside the set", "  cluster: {proxyMode: ebpf}\n"},
		{"duration without a unit", "  cluster: {minSyncPeriod: 10}\n"},
		{"rate without a unit", "  clients: [{name: c, target: s, rate: 100}]\n"},
		{"percentage without the sign", "  cluster: {network: {loss: 0.03}}\n"},
		{"bandwidth with /s", "  cluster: {network: {bandwidth: 10mbit/s}}\n"},
		{"negative CPU", "  cluster: {nodes: [{name: n, count: 1, cpu: -1}]}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(base + tc.yaml)
			if _, _, diags := scenario.Load("x.yaml", data, nil); !diags.HasErrors() {
				t.Fatalf("the case is wrong: Load accepts it")
			}
			if err := sch.Validate(asJSON(t, data)); err == nil {
				t.Error("the schema accepts it")
			}
		})
	}
}

// Each scalar pattern accepts what its parser accepts and refuses what it refuses, on
// the forms documented and the mistakes users make.
func TestPatternsAgreeWithTheParsers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pattern string
		parse   func(string) error
		values  []string
	}{
		{"duration", durationPattern, func(s string) error { return parseDuration(s) },
			[]string{"0", "250us", "250µs", "10ms", "1m30s", "1.5h", "2h45m", ".5s", "10", "1d", "ms", "-1s", "1 s", ""}},
		{"quantity", quantityPattern, func(s string) error { return parseQuantity(s) },
			[]string{"500m", "2", "0.5", "20Mi", "1Gi", "1e3", "16Ki", "1M", "-1", "1mi", "1KB", "cores", ""}},
		{"rate", ratePattern, func(s string) error { _, err := scenario.ParseRate(s); return err },
			[]string{"1000/s", "60/m", "3600/h", "2.5/s", "1e3/s", "1000", "1000/sec", "/s", "1000 /s"}},
		{"percentage", percentPattern, func(s string) error { _, err := scenario.ParsePercent(s); return err },
			[]string{"3%", "0.5%", "100%", "0%", "1e1%", "3", "0.03", "%", "3 %"}},
		{"bandwidth", bandwidthPattern, func(s string) error { _, err := scenario.ParseBandwidth(s); return err },
			[]string{"1bit", "100kbit", "100mbit", "1gbit", "1tbit", "8bps", "10kbps", "10mbps", "1gbps", "1tbps", "10MBit", "1.5Gbit",
				"10mbit/s", "10", "10mb", "mbit", "10 mbit"}},
	} {
		re := regexp.MustCompile(tc.pattern)
		for _, v := range tc.values {
			if want, got := tc.parse(v) == nil, re.MatchString(v); want != got {
				t.Errorf("%s %q: parser accepts it: %v, pattern matches it: %v", tc.name, v, want, got)
			}
		}
	}
}

// The README and docs/ are all a user who clones the repository has: they point at
// nothing outside it.
func TestUserDocsStayInsideTheRepository(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(moduleRoot, "docs", "*"))
	files = append(files, filepath.Join(moduleRoot, "README.md"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, outside := range []string{"../shared", "DESIGN.md"} {
			if bytes.Contains(data, []byte(outside)) {
				t.Errorf("%s mentions %s, which a clone of the repository does not have", filepath.Base(f), outside)
			}
		}
	}
}
