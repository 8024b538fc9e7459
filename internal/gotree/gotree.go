// Package gotree type-checks this module's own packages for the tests that keep
// the house rules (models import no scenario, no code names a kube-proxy mode,
// emulate uses simulate only for its reference run): go list gives each package's
// files and the compiler's export data of what it imports, and go/types checks the
// package's non-test files against them.
package gotree

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
	"strings"
	"testing"
)

// Package is what go list says of a package.
type Package struct {
	ImportPath, Dir, Export string
	GoFiles, Imports        []string // GoFiles leaves the tests out
	DepOnly                 bool     // listed only as a dependency of the patterns
	Module                  *struct{ Main bool }
}

// Tree is the packages that patterns name and everything they import.
type Tree struct {
	Packages []Package
	Fset     *token.FileSet
	imp      types.Importer
}

// List lists patterns (relative to the module's root) and their dependencies,
// building each one's export data.
func List(t testing.TB, patterns ...string) *Tree {
	t.Helper()
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"list", "-export", "-deps", "-json=ImportPath,Dir,Export,GoFiles,Imports,DepOnly,Module"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.Bytes())
	}
	tr := &Tree{Fset: token.NewFileSet()}
	exports := map[string]string{}
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var p Package
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		tr.Packages = append(tr.Packages, p)
		exports[p.ImportPath] = p.Export
	}
	tr.imp = importer.ForCompiler(tr.Fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, errors.New("no export data for " + path)
		}
		return os.Open(exports[path])
	})
	return tr
}

// Check parses and type-checks p's non-test files, filling info, and returns them.
func (tr *Tree) Check(t testing.TB, p *Package, info *types.Info) []*ast.File {
	t.Helper()
	var files []*ast.File
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(tr.Fset, filepath.Join(p.Dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if _, err := (&types.Config{Importer: tr.imp}).Check(p.ImportPath, tr.Fset, files, info); err != nil {
		t.Fatalf("%s: %v", p.ImportPath, err)
	}
	return files
}
