package importer

import (
	"bytes"
	"path/filepath"
	"testing"

	"trafficlab/internal/golden"
	"trafficlab/inventory"
	"trafficlab/scenario"
	"trafficlab/simulate"
)

// Each manifest set imports to its golden scenario and summary; the scenario
// validates, and a simulated minute of it sends requests to every service, so
// that the calls inferred carry traffic.
func TestImportGolden(t *testing.T) {
	for _, set := range []string{"shop", "grpc", "mesh"} {
		t.Run(set, func(t *testing.T) {
			var inv inventory.Inventory
			if err := inv.ReadPath(filepath.Join("testdata", set)); err != nil {
				t.Fatal(err)
			}
			im, err := Scenario(&inv, Options{Name: set, From: set})
			if err != nil {
				t.Fatal(err)
			}
			var doc, summary bytes.Buffer
			if err := im.WriteYAML(&doc); err != nil {
				t.Fatal(err)
			}
			if err := im.WriteSummary(&summary); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", set+".scenario.yaml"), doc.Bytes())
			golden.Check(t, filepath.Join("testdata", set+".summary.txt"), summary.Bytes())

			sc, _, diags := scenario.Load(set+".yaml", doc.Bytes(), []string{"spec.duration=60s"})
			if diags.HasErrors() || len(diags) > 0 {
				t.Fatalf("the scenario does not load cleanly:\n%v", diags)
			}
			e, err := simulate.New(sc)
			if err != nil {
				t.Fatal(err)
			}
			e.Run(nil)
			served := map[string]int64{}
			for _, p := range e.Result().Pods {
				served[p.Service] += p.Requests
			}
			for _, s := range im.Services {
				if served[s] == 0 {
					t.Errorf("service %s served no request in a simulated minute", s)
				}
			}
		})
	}
}
