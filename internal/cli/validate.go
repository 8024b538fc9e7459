package cli

import (
	"io"

	"github.com/spf13/cobra"

	"trafficlab/simulate"
)

func newValidate(stderr io.Writer) *cobra.Command {
	var sets []string
	c := &cobra.Command{
		Use:   "validate FILE",
		Short: "Check a scenario; print nothing when it is valid",
		Long: `validate parses and checks a scenario exactly as simulate would, without running it.
It prints nothing and exits 0 when the scenario is valid. Each problem is printed as
FILE:LINE:COL: message (the format editors jump to), and the exit code is 2.
Warnings (for example a Service with 0 replicas that clients call) are printed but
do not fail.`,
		Example: `  trafficlab validate scenario.yaml
  trafficlab validate scenario.yaml --set spec.clients[0].threads=20`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			// Loading checks every size against its limit before anything is built.
			sc, pos, err := loadScenario(args, sets, stderr)
			if err != nil {
				return err
			}
			// Placing the pods finds what only the engine's set-up can (a pod no node
			// fits); Check does that without the clients' callers a run needs.
			err = simulate.Check(sc)
			if d, ok := pos.Locate(err); ok {
				return badInput{d}
			}
			return err
		},
	}
	c.Flags().StringArrayVar(&sets, "set", nil, "override a scenario value: --set path=value (repeatable)")
	return c
}
