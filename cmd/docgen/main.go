// Command docgen writes the generated reference: docs/scenario.md, docs/result.md and
// docs/scenario.schema.json from the scenario and result types and their doc comments,
// and the copy of those comments `trafficlab schema` uses. Run it from anywhere in the
// module after changing a type or a doc comment:
//
//	go run ./cmd/docgen
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"trafficlab/internal/reference"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	outs, err := reference.Generate(root)
	if err != nil {
		return err
	}
	for _, o := range outs {
		p := filepath.Join(root, o.Path)
		if err := os.WriteFile(p, o.Data, 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", o.Path)
	}
	return nil
}

// moduleRoot is the nearest directory up from here with a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory: run it inside the trafficlab module")
		}
		dir = parent
	}
}
