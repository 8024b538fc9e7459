package cli

import (
	"io"

	"github.com/spf13/cobra"

	"trafficlab/internal/reference"
)

func newSchema(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print a JSON Schema of the scenario, for editors",
		Long: `schema prints a JSON Schema (draft-07) of the scenario document: every key with
its meaning as a description, the fixed sets validation accepts (proxyMode,
distribution, library, ...) as enums, and durations, quantities, rates, percentages
and bandwidths as patterns. It is docs/scenario.schema.json.

Point an editor with the YAML language server (VS Code's YAML extension, and others)
at it with a first line in the scenario file:

  # yaml-language-server: $schema=PATH/TO/scenario.schema.json

The schema checks names and syntax as you type; trafficlab validate checks the rest.`,
		Example: `  trafficlab schema > scenario.schema.json`,
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := stdout.Write(reference.Schema(reference.Generated()))
			return err
		},
	}
}
