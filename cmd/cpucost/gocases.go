package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// goNetHTTP: Go's net/http client, keep-alive and a new connection per request.
func goNetHTTP(e *env) ([]sample, error) {
	return e.repeat(func() ([]sample, error) {
		run := func(figure string, keepAlive bool) (sample, error) {
			s, _, err := e.inside(e.srv, figure, clientCPU, false,
				e.self, "child", "go", "-url", e.srv.url(), "-n", strconv.Itoa(e.n), "-keepalive="+strconv.FormatBool(keepAlive))
			return s, err
		}
		reused, err := run("per request, keep-alive", true)
		if err != nil {
			return nil, err
		}
		fresh, err := run("per request, DisableKeepAlives", false)
		if err != nil {
			return nil, err
		}
		return []sample{reused, fresh, perConn("per new connection", fresh, reused)}, nil
	})
}

// trafficlabLoad: emulate's load generator, keep-alive and a new connection per
// request: what an emulated client spends, whatever library it names. Then with a
// pause before each request (R1's 14.4 ms of client creation is one in emulate):
// its timing of waits to tens of microseconds costs CPU of its own.
func trafficlabLoad(e *env) ([]sample, error) {
	return e.repeat(func() ([]sample, error) {
		run := func(figure string, keepAlive bool, n int, think time.Duration) (sample, error) {
			s, _, err := e.inside(e.srv, figure, clientCPU, false, e.self, "child", "load", "-url", e.srv.url(),
				"-n", strconv.Itoa(n), "-keepalive="+strconv.FormatBool(keepAlive), "-think", think.String())
			return s, err
		}
		reused, err := run("per request, keep-alive", true, e.n, 0)
		if err != nil {
			return nil, err
		}
		fresh, err := run("per request, a new connection each", false, e.n, 0)
		if err != nil {
			return nil, err
		}
		paced, err := run(fmt.Sprintf("per request, keep-alive, %v pause before each", loadPause), true, loadPaused, loadPause)
		if err != nil {
			return nil, err
		}
		return []sample{reused, fresh, perConn("per new connection", fresh, reused), paced}, nil
	})
}

// The paced run of trafficlabLoad: loadPaused requests, each after loadPause.
const (
	loadPause  = 15 * time.Millisecond
	loadPaused = 300
)

// vegeta rates, with keep-alive, each for vegetaStep.
var vegetaRates = []int{2000, 4000, 8000}

const (
	vegetaStep = 2 * time.Second
	// The timeout regime: a server that answers after slowDelay, vegeta with a
	// timeout of half that, each step for timeoutStep.
	slowDelay   = 20 * time.Millisecond
	timeoutStep = 5 * time.Second
)

// timeoutRate is the timeout regime's rate, well within one CPU. At the CPU's limit the
// figures depend on the rest of the machine: at 16,000 rps under taskset -c 1, vegeta
// sent 97% of its schedule on a quiet machine, but 2–73% while other work loaded it, and
// then ran seconds past its duration and left some 25,000 sockets behind, which slowed
// the runs after it: idle connections whose dial finished after their request had given
// up, which Go's Transport pools (transport.go dialConnFor, putOrCloseIdleConn), and
// closed ones in FIN_WAIT2 and CLOSE_WAIT.
const timeoutRate = 2000

// vegetaCase: vegeta's attacker at constant rates with keep-alive, then the timeout
// regime, where every request times out: Go's Transport closes a connection whose
// request was canceled (transport.go persistConn.roundTrip, case <-ctxDoneChan:
// pc.cancelRequest closes it), so every request dials anew. The timeout regime runs
// on every CPU, sharing one with the slow server, and under taskset -c 1, alone on one.
func vegetaCase(e *env) ([]sample, error) {
	slow, err := e.startDaemon(serverCPU, "serve", "-delay", slowDelay.String())
	if err != nil {
		return nil, err
	}
	defer slow.close()
	oneCPU := e.taskset && runtime.NumCPU() >= 2
	if !oneCPU {
		e.notes = append(e.notes, "vegeta: the one-CPU timeout regime needs taskset and 2 CPUs; not run")
	}
	attack := func(srv *daemon, name, cpu string, force bool, rate int, dur, timeout time.Duration) ([]sample, error) {
		s, res, err := e.inside(srv, name+", per request sent", cpu, force, e.self, "child", "vegeta",
			"-url", srv.url(), "-rate", strconv.Itoa(rate), "-dur", dur.String(), "-timeout", timeout.String(), "-out", e.tmp)
		if err != nil {
			return nil, err
		}
		return []sample{s, {name + ", sent/scheduled", "ratio", float64(res.N) / float64(res.Sched), nil}}, nil
	}
	return e.repeat(func() ([]sample, error) {
		var out []sample
		for _, rate := range vegetaRates {
			s, err := attack(e.srv, fmt.Sprintf("%d rps keep-alive", rate), anyCPU, false, rate, vegetaStep, vegeta.DefaultTimeout)
			if err != nil {
				return nil, err
			}
			out = append(out, s...)
		}
		name := fmt.Sprintf("timeout regime %d rps", timeoutRate)
		s, err := attack(slow, name+", all CPUs", anyCPU, false, timeoutRate, timeoutStep, slowDelay/2)
		if err != nil {
			return nil, err
		}
		out = append(out, s...)
		if oneCPU {
			s, err := attack(slow, name+", 1 CPU", clientCPU, true, timeoutRate, timeoutStep, slowDelay/2)
			if err != nil {
				return nil, err
			}
			out = append(out, s...)
		}
		return out, nil
	})
}

// vegetaClient is `vegeta attack -rate R/s -duration D -timeout T -output FILE` through
// vegeta's library: NewAttacker with the CLI's defaults (lib/attack.go: 10 workers,
// keep-alive, 10000 idle connections per host), a static GET target, and every result
// gob-encoded to a file, unbuffered, as the CLI's processAttack does (attack.go,
// vegeta.NewEncoder on the -output file). There is no warm-up: an Attacker serves one
// attack (Attack ends with Stop, which closes it for good), so its first connections
// are part of the figure (the conns/req column shows how many).
func vegetaClient(url string, rate int, dur, timeout time.Duration, dir string) error {
	if dur <= 0 || dur > loopLimit {
		return fmt.Errorf("duration %v: want (0, %v]", dur, loopLimit)
	}
	f, err := os.CreateTemp(dir, "vegeta-*.bin")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	enc := vegeta.NewEncoder(f)
	atk := vegeta.NewAttacker(vegeta.Timeout(timeout))
	tr := vegeta.NewStaticTargeter(vegeta.Target{Method: "GET", URL: url})

	res := loopResult{Sched: int(float64(rate) * dur.Seconds())}
	u0, t0 := selfUsage(), time.Now()
	for r := range atk.Attack(tr, vegeta.Rate{Freq: rate, Per: time.Second}, dur, "") {
		res.N++
		if r.Error != "" {
			res.Failed++
		}
		if err := enc.Encode(r); err != nil {
			atk.Stop()
			return err
		}
	}
	res.spent(u0, t0)
	return json.NewEncoder(os.Stdout).Encode(res)
}
