package cli

import (
	"encoding/json"
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"

	"trafficlab/emulate/containerlog"
)

// newContainerLog is an emulated node's container runtime for one container's
// stdout (emulate/containerlog): it reads the container's stdout on its stdin and
// writes the lines to --file in CRI's format until stdin ends, then prints what it
// did as JSON. emulate starts one per pod whose access log goes to a node's disk.
// Hidden: emulate's part, not a user's command.
func newContainerLog(stdout io.Writer) *cobra.Command {
	var file string
	c := &cobra.Command{
		Use:    "containerlog --file PATH",
		Short:  "Copy a container's stdout from stdin to a CRI log file, as the container runtime does",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if file == "" {
				return errors.New("--file is required")
			}
			st, err := containerlog.Run(os.Stdin, file)
			if err != nil {
				return err
			}
			return json.NewEncoder(stdout).Encode(st)
		},
	}
	c.Flags().StringVar(&file, "file", "", "the log file, appended to")
	return c
}
