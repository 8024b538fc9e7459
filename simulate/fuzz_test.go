package simulate

import (
	"errors"
	"strings"
	"testing"

	"trafficlab/examples"
	"trafficlab/scenario"
)

// FuzzEngine sets up and runs, for 10 ms of simulated time so that each input is
// quick, whatever scenario validates: the engine must take every valid scenario
// without panicking, and refuse one only with a FieldError that points at a path.
// It starts from every example. Run it longer with
//
//	go test -run '^$' -fuzz FuzzEngine -fuzztime 90s ./simulate
func FuzzEngine(f *testing.F) {
	for _, ex := range examples.List() {
		data, err := examples.Get(ex.Name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "")
	}
	f.Fuzz(func(t *testing.T, data []byte, set string) {
		sets := []string{"spec.duration=10ms"}
		if set != "" {
			sets = append(strings.SplitN(set, "\n", 3), sets...)
		}
		sc, _, diags := scenario.Load("f.yaml", data, sets)
		if diags.HasErrors() {
			return
		}
		e, err := New(sc)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Path == "" {
				t.Fatalf("New: %v, not a FieldError at a path", err)
			}
			return
		}
		e.Run(nil)
		r := e.Result()
		if r.Requests.Total < 0 {
			t.Fatalf("%d requests", r.Requests.Total)
		}
	})
}
