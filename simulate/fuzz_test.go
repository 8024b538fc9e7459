package simulate

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"trafficlab/examples"
	"trafficlab/scenario"
)

// FuzzEngine sets up and runs, for 10 ms of simulated time so that each input is
// quick, what validates of an example changed by two --set arguments: the engine
// must take every valid scenario without panicking, and refuse one only with a
// FieldError at a path; and its estimate of the requests offered is a finite
// number. Changing values through --set keeps most inputs valid,
// where a mutated document seldom is. Run it longer with
//
//	go test -run '^$' -fuzz FuzzEngine -fuzztime 90s ./simulate
func FuzzEngine(f *testing.F) {
	var docs [][]byte
	for _, ex := range examples.List() {
		data, err := examples.Get(ex.Name)
		if err != nil {
			f.Fatal(err)
		}
		docs = append(docs, data)
	}
	for i := range docs {
		f.Add(uint8(i), "spec.services[0].replicas=3", "spec.clients[0].replicas=2")
	}
	for _, s := range []string{
		"spec.services[0].pod.serviceTime={distribution: lognormal, mean: 1ms, p99: 10ms}",
		"spec.cluster.nodes=[{name: a, count: 2, cpu: '1'}, {name: b, count: 3, cpu: '2'}]",
		"spec.clients[0].rate=1000/s", "spec.clients[0].connections.protocol=http2",
		"spec.clients[0].connections.reuse=none", "spec.cluster.network.loss=3%",
		"spec.clients[0].sidecar={concurrency: 2}", "spec.services[0].sidecar={concurrency: 1}",
		"spec.faults=[{kind: pod-kill, start: 1ms, target: {pod: webapp1-0}}]",
		"spec.services[0].pod.cpu=100m", "spec.clients[0].timeout=1ms", "spec.cluster.proxyMode=ipvs",
	} {
		f.Add(uint8(0), s, "spec.clients[0].threads=")
		f.Add(uint8(0), s, "spec.seed=2")
	}
	f.Fuzz(func(t *testing.T, doc uint8, a, b string) {
		sets := []string{a, b, "spec.duration=10ms"}
		sc, _, diags := scenario.Load("f.yaml", docs[int(doc)%len(docs)], sets)
		if diags.HasErrors() {
			return
		}
		if n := Offered(sc); !(n >= 0) || math.IsInf(n, 0) {
			t.Fatalf("Offered = %v", n)
		}
		e, err := New(sc)
		if err != nil {
			var fe *scenario.FieldError
			if !errors.As(err, &fe) || fe.Path == "" {
				t.Fatalf("New: %v, not a FieldError at a path", err)
			}
			return
		}
		// A run that never lets simulated time advance would hang the fuzzer without
		// a trace; a panic makes it a crasher with its input. 10 ms of what the
		// fuzzer makes of the examples run in well under a second.
		watchdog := time.AfterFunc(time.Minute, func() {
			panic(fmt.Sprintf("10 ms of simulated time took a minute: %q %q on example %d", a, b, int(doc)%len(docs)))
		})
		e.Run(nil)
		watchdog.Stop()
		if r := e.Result(); r.Requests.Total < 0 {
			t.Fatalf("%d requests", r.Requests.Total)
		}
	})
}
