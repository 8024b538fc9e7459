package emulate

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// referenceRun is what emulate may use of simulate: running the simulation it
// replays (New, Run, Result) and the placement that run starts from (Layout).
// What else both engines need lives in packages both import (placement, scenario's
// FieldError, result's error kinds), so simulate can change inside without emulate.
var referenceRun = map[string]bool{"Engine": true, "New": true, "Run": true, "Result": true, "Layout": true}

// Every identifier of simulate that the code of emulate and its packages uses,
// package-level or a method or field reached through a value, is one of referenceRun.
func TestUsesSimulateOnlyForTheReferenceRun(t *testing.T) {
	pkgs := listPackages(t, "trafficlab/emulate/...")
	exports := map[string]string{}
	for _, p := range pkgs {
		exports[p.ImportPath] = p.Export
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, errors.New("no export data for " + path)
		}
		return os.Open(exports[path])
	})
	checked := 0
	for _, p := range pkgs {
		if p.DepOnly || !slices.Contains(p.Imports, "trafficlab/simulate") {
			continue
		}
		fset := token.NewFileSet()
		var files []*ast.File
		for _, name := range p.GoFiles { // GoFiles leaves the tests out
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
		if _, err := (&types.Config{Importer: imp}).Check(p.ImportPath, fset, files, info); err != nil {
			t.Fatalf("%s: %v", p.ImportPath, err)
		}
		for id, obj := range info.Uses {
			if obj.Pkg() != nil && obj.Pkg().Path() == "trafficlab/simulate" && !referenceRun[obj.Name()] {
				t.Errorf("%s: uses simulate's %s, which is not running the reference simulation", fset.Position(id.Pos()), obj.Name())
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no package of emulate imports simulate: the check checked nothing")
	}
}

type listedPackage struct {
	ImportPath, Dir, Export string
	GoFiles, Imports        []string
	DepOnly                 bool
}

// listPackages lists pattern and its dependencies, with their export data built.
func listPackages(t *testing.T, pattern string) []listedPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Dir,Export,GoFiles,Imports,DepOnly", pattern).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listedPackage
	for d := json.NewDecoder(bytes.NewReader(out)); d.More(); {
		var p listedPackage
		if err := d.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}
