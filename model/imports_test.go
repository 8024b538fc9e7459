// Package model_test keeps the rule every model follows: a model knows nothing of
// scenarios or of the engine that runs it. It takes its own small spec (dist.Spec,
// kubelet.TerminationSpec) that scenario converts its types into, so both engines can
// share it and scenario can import models without a cycle.
package model_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// forbidden are the packages no model may import, directly or through another package.
var forbidden = []string{"trafficlab/scenario", "trafficlab/simulate"}

func TestModelsImportNeitherScenarioNorSimulate(t *testing.T) {
	// -test adds each model's test files and test binary, so a test that builds a
	// scenario value breaks the rule too.
	out, err := exec.Command("go", "list", "-test", "-json=ImportPath,Deps", "trafficlab/model/...").Output()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		t.Fatalf("go list: %v\n%s", err, ee.Stderr)
	} else if err != nil {
		t.Fatalf("go list: %v", err)
	}
	models := 0
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Deps       []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		models++
		for _, dep := range p.Deps {
			if isForbidden(dep) {
				t.Errorf("%s imports %s", p.ImportPath, dep)
			}
		}
	}
	if models == 0 {
		t.Fatal("go list found no model packages")
	}
}

// isForbidden reports whether an import path, perhaps a test variant such as
// "trafficlab/scenario [trafficlab/model/dist.test]", is or lies under a forbidden package.
func isForbidden(dep string) bool {
	path, _, _ := strings.Cut(dep, " ")
	for _, f := range forbidden {
		if path == f || strings.HasPrefix(path, f+"/") {
			return true
		}
	}
	return false
}
