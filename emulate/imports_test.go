package emulate

import (
	"go/ast"
	"go/types"
	"slices"
	"testing"
	"trafficlab/internal/gotree"
)

// referenceRun is what emulate may use of simulate: running the simulation it
// replays (New, Run, Result) and the placement that run starts from (Layout).
// What else both engines need lives in packages both import (placement, scenario's
// FieldError, result's error kinds), so simulate can change inside without emulate.
var referenceRun = map[string]bool{"Engine": true, "New": true, "Run": true, "Result": true, "Layout": true}

// Every identifier of simulate that the code of emulate and its packages uses,
// package-level or a method or field reached through a value, is one of referenceRun.
func TestUsesSimulateOnlyForTheReferenceRun(t *testing.T) {
	tree := gotree.List(t, "./emulate/...")
	checked := 0
	for i := range tree.Packages {
		p := &tree.Packages[i]
		if p.DepOnly || !slices.Contains(p.Imports, "trafficlab/simulate") {
			continue
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
		tree.Check(t, p, info)
		for id, obj := range info.Uses {
			if obj.Pkg() != nil && obj.Pkg().Path() == "trafficlab/simulate" && !referenceRun[obj.Name()] {
				t.Errorf("%s: uses simulate's %s, which is not running the reference simulation", tree.Fset.Position(id.Pos()), obj.Name())
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no package of emulate imports simulate: the check checked nothing")
	}
}
