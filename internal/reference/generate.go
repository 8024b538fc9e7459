package reference

import (
	"path/filepath"
)

// Documented packages: their directory in the module and their import path.
var documented = []struct{ dir, pkg string }{
	{"scenario", "trafficlab/scenario"},
	{"result", "trafficlab/result"},
}

// Output is one generated file, by its path in the module.
type Output struct {
	Path string
	Data []byte
}

// Generate reads the doc comments of the documented packages under the module root and
// renders every generated file.
func Generate(root string) ([]Output, error) {
	c := Comments{}
	for _, d := range documented {
		pc, err := ParseComments(filepath.Join(root, d.dir), d.pkg)
		if err != nil {
			return nil, err
		}
		c.Merge(pc)
	}
	return []Output{
		{"internal/reference/comments_gen.go", c.GoSource()},
		{"docs/scenario.md", ScenarioMarkdown(c)},
		{"docs/result.md", ResultMarkdown(c)},
		{"docs/scenario.schema.json", Schema(c)},
	}, nil
}
