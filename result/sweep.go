package result

// Sweep is a grid of runs of one scenario: every combination of the swept values,
// each run with the same seeds. JSON field names are a public interface: add, never rename.
type Sweep struct {
	// Engine that ran the points: simulate.
	Engine string `json:"engine"`
	// Scenario is the scenario's metadata.name.
	Scenario string `json:"scenario"`
	// File is the scenario file as given; empty for the built-in example.
	File string `json:"file,omitempty"`
	// DurationS is each run's length.
	DurationS float64 `json:"duration_s"`
	// Parameters are the swept paths, in the order given.
	Parameters []string `json:"parameters"`
	// Fixed are the --set values every point shares.
	Fixed []string `json:"fixed,omitempty"`
	// Seeds is how many times each point ran: with its spec.seed, spec.seed+1, ...
	// Unless spec.seed is swept, every point runs with the same seeds (common random
	// numbers), so differences between points come from the values, not from luck.
	Seeds int `json:"seeds"`
	// Points are every combination of the swept values.
	Points []SweepPoint `json:"points"`
	// Find is the answer to --find; absent without it.
	Find *Find `json:"find,omitempty"`
	// Interrupted is set when SIGINT or SIGTERM stopped the sweep: Points are then
	// only those every seed of which finished, and Find is not answered.
	Interrupted bool `json:"interrupted,omitempty"`
	// PlannedPoints is how many points the sweep was to run; set only when it was
	// interrupted.
	PlannedPoints int `json:"planned_points,omitempty"`
}

// SweepPoint is one combination of values and its runs, one per seed. Figures are
// keyed by the names of report.Figures.
type SweepPoint struct {
	// Values are the point's value of each parameter, in the order of Parameters.
	Values []string `json:"values"`
	// Runs are the point's runs, one per seed.
	Runs []SweepRun `json:"runs"`
	// Mean of each figure over the runs.
	Mean map[string]float64 `json:"mean"`
	// SD of each figure over the runs: the sample standard deviation, 0 with one seed.
	SD map[string]float64 `json:"sd"`
	// Min of each figure over the runs.
	Min map[string]float64 `json:"min"`
	// Max of each figure over the runs.
	Max map[string]float64 `json:"max"`
}

// SweepRun is one run of a point.
type SweepRun struct {
	// Seed it ran with.
	Seed int64 `json:"seed"`
	// Figures are the run's figures by name (throughput_rps, p99_ms, errors, ...).
	Figures map[string]float64 `json:"figures"`
}

// Find answers "the smallest (or largest) value of a parameter where every
// condition holds", once per combination of the other parameters' values.
type Find struct {
	// Query is the --find query as given.
	Query string `json:"query"`
	// Parameter is the path searched.
	Parameter string `json:"parameter"`
	// Figures are the figures the conditions test, in the query's order.
	Figures []string `json:"figures"`
	// Answers are one per combination of the other parameters' values.
	Answers []FindAnswer `json:"answers"`
}

// FindAnswer is the answer for one combination of the other parameters (Others, in
// the order of Parameters without the one searched). Point is the index in Points
// of the answer; nil when no value met every condition on every seed.
type FindAnswer struct {
	// Others are the other parameters' values, in the order of Parameters.
	Others []string `json:"others,omitempty"`
	// Value is the answer: the smallest (or largest) value meeting every condition;
	// null when none did.
	Value *string `json:"value"`
	// Point is the index in Points of the answer; null when there is none.
	Point *int `json:"point"`
}
