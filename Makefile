# trafficlab: `make test` is what CI runs; `make bench` prints simulated requests per
# wall second and peak memory for the reference scenarios.
GO ?= go

.PHONY: test bench build

build:
	$(GO) build -o bin/trafficlab ./cmd/trafficlab

test:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

bench:
	GOMAXPROCS=1 $(GO) test -run '^$$' -bench . -benchtime 1x ./simulate/ | grep -E "^Benchmark|^cpu"
