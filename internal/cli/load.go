package cli

import (
	"errors"
	"fmt"
	"io"

	"trafficlab/examples"
	"trafficlab/scenario"
	"trafficlab/simulate"
)

// loadScenario reads FILE (or the built-in default when no file is given), applies
// --set overrides and validates. Warnings go to stderr; errors come back as badInput.
func loadScenario(args []string, sets []string, stderr io.Writer) (*scenario.Scenario, scenario.Positions, error) {
	var (
		sc    *scenario.Scenario
		pos   scenario.Positions
		diags scenario.Diagnostics
	)
	if len(args) == 1 {
		sc, pos, diags = scenario.LoadFile(args[0], sets)
	} else {
		sc, pos, diags = scenario.Load(examples.DefaultName, examples.Default(), sets)
	}
	for _, d := range diags {
		if d.Severity == scenario.Warning {
			fmt.Fprintln(stderr, d.Error())
		}
	}
	if diags.HasErrors() {
		var errs scenario.Diagnostics
		for _, d := range diags {
			if d.Severity != scenario.Warning {
				errs = append(errs, d)
			}
		}
		return nil, pos, badInput{errs}
	}
	return sc, pos, nil
}

// buildEngine turns model-level errors that name a scenario path into positioned ones.
func buildEngine(sc *scenario.Scenario, pos scenario.Positions) (*simulate.Engine, error) {
	e, err := simulate.New(sc)
	var fe *simulate.FieldError
	if errors.As(err, &fe) {
		return nil, badInput{pos.Diag(scenario.Error, fe.Path, fe.Err.Error())}
	}
	return e, err
}
