package cli

import (
	"fmt"
	"io"

	"trafficlab/examples"
	"trafficlab/scenario"
	"trafficlab/simulate"
)

// source is a scenario document read once: its name in diagnostics and its bytes.
// A sweep loads it for every run, and a file edited meanwhile changes none of them.
type source struct {
	name string
	data []byte
}

// readSource reads FILE, or takes the built-in default when no file is given.
func readSource(args []string) (source, error) {
	if len(args) == 0 {
		return source{examples.DefaultName, examples.Default()}, nil
	}
	data, diags := scenario.ReadFile(args[0])
	if diags != nil {
		return source{}, badInput{diags}
	}
	return source{args[0], data}, nil
}

// loadScenario reads FILE (or the built-in default when no file is given) and loads
// it as loadSource does.
func loadScenario(args []string, sets []string, stderr io.Writer) (*scenario.Scenario, scenario.Positions, error) {
	src, err := readSource(args)
	if err != nil {
		return nil, scenario.Positions{}, err
	}
	return loadSource(src, sets, stderr)
}

// loadSource applies --set overrides to the document and validates it. Warnings go
// to stderr; errors come back as badInput.
func loadSource(src source, sets []string, stderr io.Writer) (*scenario.Scenario, scenario.Positions, error) {
	sc, pos, diags := scenario.Load(src.name, src.data, sets)
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
	if d, ok := pos.Locate(err); ok {
		return nil, badInput{d}
	}
	return e, err
}
