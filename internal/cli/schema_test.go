package cli

import (
	"encoding/json"
	"os"
	"testing"
)

// `trafficlab schema` prints the committed docs/scenario.schema.json, which
// internal/reference's tests hold to the types and the examples.
func TestSchemaPrintsTheCommittedSchema(t *testing.T) {
	code, out, errOut := runCLI("schema")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want, err := os.ReadFile("../../docs/scenario.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Error("trafficlab schema differs from docs/scenario.schema.json; run `go run ./cmd/docgen`")
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if doc["$schema"] != "http://json-schema.org/draft-07/schema#" {
		t.Errorf("$schema = %v", doc["$schema"])
	}
}
