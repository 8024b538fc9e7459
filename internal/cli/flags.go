package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"trafficlab/scenario"
)

// flagSets turns --seed and --duration, where given, into the --set values they
// stand for, so they are validated like any other value; each keeps the flag as
// typed for the diagnostics about it.
func flagSets(c *cobra.Command, seed int64, duration time.Duration) []scenario.FlagSet {
	var out []scenario.FlagSet
	if c.Flags().Changed("seed") {
		out = append(out, scenario.FlagSet{Flag: fmt.Sprintf("--seed %d", seed), Set: fmt.Sprintf("spec.seed=%d", seed)})
	}
	if c.Flags().Changed("duration") {
		out = append(out, scenario.FlagSet{Flag: "--duration " + duration.String(), Set: "spec.duration=" + duration.String()})
	}
	return out
}

// sets is the --set values of flags.
func sets(flags []scenario.FlagSet) []string {
	out := make([]string, len(flags))
	for i, f := range flags {
		out[i] = f.Set
	}
	return out
}

// nameFlags makes the diagnostics in err name the flags, as typed, that wrote the
// values they are about.
func nameFlags(err error, flags []scenario.FlagSet) error {
	var bad badInput
	if errors.As(err, &bad) {
		if diags, ok := bad.error.(scenario.Diagnostics); ok {
			diags.NameFlags(flags) // in place: diags shares err's slice
		}
	}
	return err
}
