package kubeproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
	pkgs := listModule(t)
	exports := map[string]string{}
	for _, p := range pkgs {
		exports[p.ImportPath] = p.Export
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if f, ok := exports[path]; ok && f != "" {
			return os.Open(f)
		}
		return nil, errors.New("no export data for " + path)
	})
	names := Names()
	checked := 0
	for _, p := range pkgs {
		if p.Module == nil || !p.Module.Main || slices.Contains(mayName, p.ImportPath) {
			continue
		}
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
		if _, err := (&types.Config{Importer: imp}).Check(p.ImportPath, fset, files, info); err != nil {
			t.Fatalf("%s: %v", p.ImportPath, err)
		}
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

// listedPackage is what go list says of a package.
type listedPackage struct {
	ImportPath, Dir, Export string
	GoFiles                 []string
	Module                  *struct{ Main bool }
}

// listModule lists the module's packages and everything they import, with the
// compiler's export data of each.
func listModule(t *testing.T) []listedPackage {
	t.Helper()
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Dir,Export,GoFiles,Module", "./...")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.Bytes())
	}
	var pkgs []listedPackage
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}
