package kubeproxy

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"testing"
	"trafficlab/internal/gotree"
)

// mayName are the packages allowed to compare a mode with its name: this one, which
// defines the names, and scenario, which reads them.
var mayName = []string{"trafficlab/model/kubeproxy", "trafficlab/scenario"}

// Outside mayName, code asks a Mode's traits and never compares the mode with a name:
// no ==, != or switch case of the module's non-test code has a constant operand that
// spells a mode ("userspace", a constant holding "ipvs", ...). Packages are
// type-checked, so constants are seen through their names.
func TestNoCodeComparesAModeWithItsName(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the whole module")
	}
	tree := gotree.List(t, "./...")
	names := Names()
	checked := 0
	for i := range tree.Packages {
		p := &tree.Packages[i]
		if p.Module == nil || !p.Module.Main || slices.Contains(mayName, p.ImportPath) {
			continue
		}
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
		files := tree.Check(t, p, info)
		fset := tree.Fset
		checked++
		namesAMode := func(e ast.Expr) {
			tv := info.Types[e]
			if tv.Value != nil && tv.Value.Kind() == constant.String && slices.Contains(names, constant.StringVal(tv.Value)) {
				t.Errorf("%s: compares with the mode name %s; ask the kubeproxy.Mode's traits", fset.Position(e.Pos()), tv.Value)
			}
		}
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.BinaryExpr:
					if n.Op == token.EQL || n.Op == token.NEQ {
						namesAMode(n.X)
						namesAMode(n.Y)
					}
				case *ast.SwitchStmt:
					if n.Tag != nil {
						for _, s := range n.Body.List {
							for _, e := range s.(*ast.CaseClause).List {
								namesAMode(e)
							}
						}
					}
				}
				return true
			})
		}
	}
	if checked == 0 {
		t.Fatal("no package of the module was checked")
	}
}
