package main

import (
	"fmt"
	"runtime"
	"strings"
	"sync"

	"trafficlab/examples"
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/simulate"
)

// lab runs examples, each file and set of overrides once however many regions
// quote it, at most one run per core at a time.
type lab struct {
	slots chan struct{}
	mu    sync.Mutex
	runs  map[string]*pending
}

type pending struct {
	once sync.Once
	r    *result.Result
	err  error
}

func newLab() *lab {
	return &lab{slots: make(chan struct{}, runtime.GOMAXPROCS(0)), runs: map[string]*pending{}}
}

// run is one simulation: an example file and --set overrides, as on the command line.
type run struct {
	file string
	sets []string
}

func (r run) key() string { return r.file + "\x00" + strings.Join(r.sets, "\x00") }

// result runs file with sets, or returns the run made before.
func (l *lab) result(file string, sets ...string) (*result.Result, error) {
	rs, err := l.results(run{file, sets})
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// results runs several side by side, each once.
func (l *lab) results(runs ...run) ([]*result.Result, error) {
	out, errs := make([]*result.Result, len(runs)), make([]error, len(runs))
	var wg sync.WaitGroup
	for i, r := range runs {
		l.mu.Lock()
		p := l.runs[r.key()]
		if p == nil {
			p = &pending{}
			l.runs[r.key()] = p
		}
		l.mu.Unlock()
		wg.Go(func() {
			p.once.Do(func() {
				l.slots <- struct{}{}
				defer func() { <-l.slots }()
				p.r, p.err = simulateExample(r)
			})
			out[i], errs[i] = p.r, p.err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func simulateExample(r run) (*result.Result, error) {
	data, err := examples.Get(r.file)
	if err != nil {
		return nil, err
	}
	sc, _, diags := scenario.Load(r.file, data, r.sets)
	if diags.HasErrors() {
		return nil, fmt.Errorf("%s %v: %v", r.file, r.sets, diags)
	}
	e, err := simulate.New(sc)
	if err != nil {
		return nil, fmt.Errorf("%s %v: %w", r.file, r.sets, err)
	}
	e.Run(nil)
	return e.Result(), nil
}
