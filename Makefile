# trafficlab: `make test` is what CI runs; `make bench` prints simulated requests per
# wall second and peak memory for the reference scenarios on one core, then a 20-point
# sweep's wall time run by run and on every core. `make fidelity` (root) runs a fixed set
# of scenarios in simulate and emulate, then those a cluster can run on the local cluster
# (hack/localcluster.sh, brought up and taken down), and prints how far apart they are.
# `make examples-doc` rewrites the figures in examples/README.md from runs of the examples.
GO ?= go

.PHONY: test bench build fidelity examples-doc

# A static binary (CGO_ENABLED=0), which `trafficlab image` can pack, named after the
# commit it was built from.
build:
	CGO_ENABLED=0 $(GO) build -ldflags "-X trafficlab/internal/cli.version=$$(git describe --always --dirty 2>/dev/null || echo dev)" -o bin/trafficlab ./cmd/trafficlab

test:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt -l: not formatted: $$unformatted" >&2; exit 1; fi
	$(GO) vet ./...
	$(GO) test -count=1 $$($(GO) list ./... | grep -v /emulate)
	# The emulate tests time real packets (a 5 ms delay to within 0.25 ms, an RTO floor):
	# one package at a time, so that no other test binary competes for the 2 cores.
	$(GO) test -count=1 -p 1 ./emulate/...
	# The load generator against wrk: a measurement, so with nothing else running.
	TRAFFICLAB_OVERHEAD_TEST=1 $(GO) test -count=1 -v -run 'TestOverheadAgainstWrk' ./emulate/load
	# Sweeps run engines side by side: the race detector checks they share nothing.
	$(GO) test -count=1 -race -run 'Sweep|TestRun' ./internal/cli ./sweep
	# Fuzz each target for a fixed number of inputs, about 10 s on this project's 2-core CI
	# machine (go test runs one fuzzer at a time): the scenario loader and the engine's
	# set-up, reading a Result and vegeta's results as report and compare do, and the page's
	# latency histogram. A count, not a duration: with -fuzztime 10s, Go's fuzz coordinator
	# (through 1.26) can fail a target with a bare "context deadline exceeded" when the
	# deadline races a busy worker (go.dev/issue/75804); a count sets no deadline.
	# Minimising a crasher is bounded too: the default 60 s stalled on the 47 KB Result
	# seeds. Every crasher found becomes a file under the package's testdata/fuzz, which
	# plain go test runs from then on.
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime 30000x -fuzzminimizetime 3s ./scenario
	$(GO) test -run '^$$' -fuzz '^FuzzSet$$' -fuzztime 20000x -fuzzminimizetime 3s ./scenario
	$(GO) test -run '^$$' -fuzz '^FuzzScalars$$' -fuzztime 100000x -fuzzminimizetime 3s ./scenario
	$(GO) test -run '^$$' -fuzz '^FuzzResult$$' -fuzztime 60000x -fuzzminimizetime 3s ./resultfile
	$(GO) test -run '^$$' -fuzz '^FuzzVegeta$$' -fuzztime 100000x -fuzzminimizetime 3s ./resultfile
	$(GO) test -run '^$$' -fuzz '^FuzzSpectrumHistogram$$' -fuzztime 50000x -fuzzminimizetime 3s ./report
	$(GO) test -run '^$$' -fuzz '^FuzzEngine$$' -fuzztime 20000x -fuzzminimizetime 3s ./simulate

bench:
	GOMAXPROCS=1 $(GO) test -run '^$$' -bench . -benchtime 1x ./simulate/ | grep -E "^Benchmark|^cpu"
	$(GO) test -run '^$$' -bench Sweep -benchtime 1x ./sweep/ | grep -E "^Benchmark"

fidelity: build
	$(GO) run ./cmd/fidelity -markdown -cluster

examples-doc:
	$(GO) run ./cmd/exampledoc -w
