// Package examples embeds the example scenarios, so `trafficlab simulate` runs one
// with no file at hand and `trafficlab examples` can print them.
package examples

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed *.yaml
var files embed.FS

// DefaultName is the scenario `trafficlab simulate` runs without a file.
const DefaultName = "r1-shared-client-5-threads.yaml"

// Example is one embedded scenario.
type Example struct {
	Name string
	// Description is metadata.description with its line breaks and indents as spaces.
	Description string
}

// Default returns the default scenario's bytes.
func Default() []byte {
	data, err := files.ReadFile(DefaultName)
	if err != nil {
		panic(err) // the embed directive guarantees it
	}
	return data
}

// Get returns one scenario by file name.
func Get(name string) ([]byte, error) {
	data, err := files.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("no example %q; run `trafficlab examples` for the list", name)
	}
	return data, nil
}

// List returns every example with its metadata.description on one line.
func List() []Example {
	names, _ := fs.Glob(files, "*.yaml")
	sort.Strings(names)
	var out []Example
	for _, n := range names {
		data, _ := files.ReadFile(n)
		var doc struct {
			Metadata struct {
				Description string `yaml:"description"`
			} `yaml:"metadata"`
		}
		_ = yaml.Unmarshal(data, &doc)
		out = append(out, Example{Name: n, Description: strings.Join(strings.Fields(doc.Metadata.Description), " ")})
	}
	return out
}
