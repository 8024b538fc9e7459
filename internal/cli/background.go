package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"trafficlab/emulate/background"
	"trafficlab/scenario"
)

// newBackground is a background workload's pod for emulate (emulate/background):
// it burns the spec's cores and writes its chunks to --file from --start for
// --duration, on its schedule, then prints what it wrote as JSON; SIGTERM or
// SIGINT ends it early. Hidden: emulate's part, not a user's command.
func newBackground(stdout io.Writer) *cobra.Command {
	var specJSON, file string
	var start int64
	var duration time.Duration
	c := &cobra.Command{
		Use:    "background --spec-json JSON --start UNIXNANO --duration D [--file PATH]",
		Short:  "Run a background workload (spec.background[]) for emulate",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var spec scenario.Background
			if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
				return errors.New("--spec-json: " + err.Error())
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			rep, err := background.Run(ctx, background.Config{Spec: &spec, File: file, Start: time.Unix(0, start), Duration: duration})
			if err != nil {
				return err
			}
			return json.NewEncoder(stdout).Encode(rep)
		},
	}
	c.Flags().StringVar(&specJSON, "spec-json", "", "the workload, scenario.Background in JSON")
	c.Flags().StringVar(&file, "file", "", "where it writes; none: it writes nothing")
	c.Flags().Int64Var(&start, "start", 0, "the run's start, in nanoseconds since the epoch")
	c.Flags().DurationVar(&duration, "duration", 0, "the run's length")
	return c
}
