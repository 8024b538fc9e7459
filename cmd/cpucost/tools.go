package main

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// abCase: ApacheBench, sequential (-c 1) and with 10 connections in flight, each with
// and without -k. Without -k ab sends HTTP/1.0 requests without keep-alive, so the
// server closes each connection after its response; with -k it sends "Connection:
// Keep-Alive" and reuses. ab refuses fewer requests than -c, so the baseline is -n c.
func abCase(e *env) ([]sample, error) {
	limit := strconv.Itoa(int(loopLimit.Seconds()))
	return e.repeat(func() ([]sample, error) {
		var out []sample
		for _, c := range []int{1, 10} {
			run := func(k bool) (sample, error) {
				figure := fmt.Sprintf("-c %d, per request", c)
				if k {
					figure = fmt.Sprintf("-k -c %d, per request", c)
				}
				return e.differential(e.srv, figure, c, e.n, func(n int) []string {
					// -t before -n: -t sets -n to 50000, a later -n sets it back.
					argv := []string{"ab", "-q", "-s", "5", "-t", limit, "-n", strconv.Itoa(n), "-c", strconv.Itoa(c)}
					if k {
						argv = append(argv, "-k")
					}
					return append(argv, e.srv.url())
				}, parseAB)
			}
			fresh, err := run(false)
			if err != nil {
				return nil, err
			}
			reused, err := run(true)
			if err != nil {
				return nil, err
			}
			out = append(out, fresh, reused, perConn(fmt.Sprintf("-c %d, per new connection", c), fresh, reused))
		}
		return out, nil
	})
}

// parseAB reads ab's report: "Complete requests:", as failed "Failed requests:" plus
// "Non-2xx responses:", and "Time taken for tests:".
func parseAB(out string) (loopCounts, error) {
	var c loopCounts
	var complete, took bool
	for _, l := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(l, ":")
		v = strings.TrimSpace(v)
		var err error
		switch strings.TrimSpace(k) {
		case "Complete requests":
			c.attempts, err = strconv.Atoi(v)
			complete = true
		case "Failed requests", "Non-2xx responses":
			var n int
			n, err = strconv.Atoi(v)
			c.failed += n
		case "Time taken for tests":
			var secs float64
			secs, err = strconv.ParseFloat(strings.TrimSuffix(v, " seconds"), 64)
			c.wall = time.Duration(secs * float64(time.Second))
			took = true
		}
		if err != nil {
			return loopCounts{}, fmt.Errorf("ab: %q: %w", l, err)
		}
	}
	if !complete || !took {
		return loopCounts{}, fmt.Errorf("ab: no \"Complete requests\" or \"Time taken for tests\" in %q", out)
	}
	return c, nil
}

// parseCounts reads the "attempts failed µs" line the loops below print last: the
// requests attempted, how many failed, and the loop's wall time in microseconds.
func parseCounts(out string) (loopCounts, error) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var c loopCounts
	var us int64
	if _, err := fmt.Sscan(lines[len(lines)-1], &c.attempts, &c.failed, &us); err != nil {
		return loopCounts{}, fmt.Errorf("want \"attempts failed µs\", got %q", out)
	}
	c.wall = time.Duration(us) * time.Microsecond
	return c, nil
}

// curlLoopScript runs curl $1 times on $2, one process each, as a shell loop in a
// benchmark script would, for at most $3 seconds; -q first ignores any .curlrc.
// EPOCHREALTIME (bash 5) is seconds with microseconds: without its separator, µs.
const curlLoopScript = `n=$1 url=$2 end=$((SECONDS + $3)) i=0 failed=0 t0=${EPOCHREALTIME/[.,]/}; ` +
	`while ((i < n && SECONDS < end)); do i=$((i + 1)); curl -q -sf -o /dev/null --max-time 5 "$url" || failed=$((failed + 1)); done; ` +
	`echo "$i $failed $((${EPOCHREALTIME/[.,]/} - t0))"`

// curlLoop: a bash loop running curl, one process per request. The figure is bash's
// fork and wait plus curl's whole life: exec, dynamic linking, libcurl set-up, one
// connection and one request.
func curlLoop(e *env) ([]sample, error) {
	return e.repeat(func() ([]sample, error) {
		s, err := e.differential(e.srv, "per request (a curl process each)", 0, e.curlN, func(n int) []string {
			return []string{"bash", "-c", curlLoopScript, "curl-loop", strconv.Itoa(n), e.srv.url(), strconv.Itoa(int(loopLimit.Seconds()))}
		}, parseCounts)
		return []sample{s}, err
	})
}

//go:embed requests_loop.py
var requestsLoop []byte

// pythonWarmup is how many warm-up requests the Python client sends, in the baseline
// run as in the measured one.
const pythonWarmup = 200

// pythonRequests: the requests library, a Session reused, a Session sending
// "Connection: close", and requests.get.
func pythonRequests(e *env) ([]sample, error) {
	if _, err := e.runProc(anyCPU, false, "python3", "-c", "import requests"); err != nil {
		return nil, skipError{fmt.Errorf("python3 cannot import requests (pip install requests): %w", err)}
	}
	script := filepath.Join(e.tmp, "requests_loop.py")
	if err := os.WriteFile(script, requestsLoop, 0o644); err != nil {
		return nil, err
	}
	return e.repeat(func() ([]sample, error) {
		var s [3]sample
		for i, mode := range []struct{ mode, figure string }{
			{"session", "Session reused, per request"},
			{"session-close", "Session, Connection: close, per request"},
			{"get", "requests.get (new Session each), per request"},
		} {
			var err error
			s[i], err = e.differential(e.srv, mode.figure, 0, e.n, func(n int) []string {
				return []string{"python3", script, mode.mode, strconv.Itoa(n), e.srv.url(), strconv.Itoa(pythonWarmup), secs(loopLimit)}
			}, parseCounts)
			if err != nil {
				return nil, err
			}
		}
		return []sample{s[0], s[1], s[2],
			perConn("per new connection (Connection: close − reused)", s[1], s[0]),
			perConn("per requests.get (Session and connection) − reused", s[2], s[0]),
		}, nil
	})
}

//go:embed node_loop.js
var nodeLoop []byte

// closePath is the path the server answers with Connection: close.
const closePath = "/close"

// nodeWarmup requests warm V8's JIT before each measured loop.
const nodeWarmup = 2000

// nodeClients: Node.js's global fetch (undici) and http.get on the globalAgent, each
// with connections kept alive and with a new connection per request (the server
// closes each), one request at a time (node_loop.js).
func nodeClients(e *env) ([]sample, error) {
	script := filepath.Join(e.tmp, "node_loop.js")
	if err := os.WriteFile(script, nodeLoop, 0o644); err != nil {
		return nil, err
	}
	return e.keptAndClosed([][2]string{{"fetch", "fetch (undici)"}, {"http", "http.get, globalAgent"}},
		func(mode string, n int) []string {
			return []string{"node", script, mode, strconv.Itoa(n), e.srv.url(), strconv.Itoa(nodeWarmup), secs(loopLimit)}
		})
}

// keptAndClosed measures each client (a mode and its name) of a script that prints
// "attempts failed µs" (parseCounts): per request on a kept connection (mode), per
// request when the server closes each (mode + "-close", to closePath), and their
// difference, per new connection. argv is the script's command line for a mode and
// a count.
func (e *env) keptAndClosed(clients [][2]string, argv func(mode string, n int) []string) ([]sample, error) {
	return e.repeat(func() ([]sample, error) {
		var out []sample
		for _, client := range clients {
			mode, name := client[0], client[1]
			var s [2]sample
			for i, m := range []string{mode, mode + "-close"} {
				figure := name + ", per request on a kept connection"
				if i == 1 {
					figure = name + ", per request, a new connection each"
				}
				var err error
				s[i], err = e.differential(e.srv, figure, 0, e.n, func(n int) []string { return argv(m, n) }, parseCounts)
				if err != nil {
					return nil, err
				}
			}
			out = append(out, s[0], s[1], perConn(name+", per new connection", s[1], s[0]))
		}
		return out, nil
	})
}

//go:embed pyclients_loop.py
var pyClientsLoop []byte

// pythonAsyncClients: one httpx.Client and one aiohttp.ClientSession, each on
// kept connections and with the server closing each answer's connection, one
// request at a time (pyclients_loop.py).
func pythonAsyncClients(e *env) ([]sample, error) {
	if _, err := e.runProc(anyCPU, false, "python3", "-c", "import httpx, aiohttp"); err != nil {
		return nil, skipError{fmt.Errorf("python3 cannot import httpx and aiohttp (pip install httpx aiohttp): %w", err)}
	}
	script := filepath.Join(e.tmp, "pyclients_loop.py")
	if err := os.WriteFile(script, pyClientsLoop, 0o644); err != nil {
		return nil, err
	}
	return e.keptAndClosed([][2]string{{"httpx", "httpx"}, {"aiohttp", "aiohttp"}},
		func(mode string, n int) []string {
			return []string{"python3", script, mode, strconv.Itoa(n), e.srv.url(), strconv.Itoa(pythonWarmup), secs(loopLimit)}
		})
}

//go:embed HttpLoop.java
var httpLoop []byte

// The Java client's loop: JIT compilation takes the shared client's request path from
// about 800 µs to 85 µs of CPU per request over its first 20,000 requests, and the
// Connection: close path from 1,100 µs to 180 µs over 20,000 to 25,000 (measured on
// this project's 2-vCPU machine, pinned, in 1,000-request steps), so those modes warm
// up for 20,000 and 25,000 requests (or javaWarmupLimit, whichever comes first); a new
// client per request, dominated by building the client, for 1,000. Then each runs until
// it has spent javaCPU of CPU, so that getProcessCpuTime's 10 ms steps are at most 2%
// of the figure.
const (
	javaWarmupLimit = 12 * time.Second
	javaCPU         = 500 * time.Millisecond
	javaMaxN        = 100000
)

// javaHTTPClient: java.net.http.HttpClient (HTTP/1.1), one shared client, one
// shared client sending "Connection: close", and a new client per request, each
// measured inside the JVM after warm-up (HttpLoop.java).
func javaHTTPClient(e *env) ([]sample, error) {
	dir := filepath.Join(e.tmp, "java")
	src := filepath.Join(dir, "HttpLoop.java")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(src, httpLoop, 0o644); err != nil {
		return nil, err
	}
	if _, err := e.runProc(anyCPU, false, "javac", "-d", dir, src); err != nil {
		return nil, err
	}
	return e.repeat(func() ([]sample, error) {
		var s [3]sample
		for i, mode := range []struct {
			mode, figure string
			warmup       int
		}{
			{"shared", "shared HttpClient, per request", 20000},
			{"close", "shared HttpClient, Connection: close, per request", 25000},
			{"new-client", "new HttpClient each, per request", 1000},
		} {
			var err error
			s[i], _, err = e.inside(e.srv, mode.figure, clientCPU, false,
				"java", "-Djdk.httpclient.allowRestrictedHeaders=connection", "-cp", dir, "HttpLoop", mode.mode,
				strconv.Itoa(javaMaxN), e.srv.url(), strconv.Itoa(mode.warmup), secs(javaWarmupLimit), secs(javaCPU), secs(loopLimit))
			if err != nil {
				return nil, err
			}
		}
		return []sample{s[0], s[1], s[2],
			perConn("per new connection (Connection: close − shared)", s[1], s[0]),
			perConn("per new HttpClient and connection − shared", s[2], s[0]),
		}, nil
	})
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

//go:embed LibLoop.java
var libLoop []byte

//go:embed jvmlibs.pom.xml
var jvmLibsPom []byte

// jvmLibraries: OkHttp and Apache HttpClient 5, at the versions library/jvm.go
// cites, fetched by Maven, each with connections kept alive and with the server
// closing each answer's connection, measured inside the JVM after the same
// warm-ups as java-httpclient's (LibLoop.java).
func jvmLibraries(e *env) ([]sample, error) {
	dir := filepath.Join(e.tmp, "jvmlibs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	pom, src, cpFile := filepath.Join(dir, "pom.xml"), filepath.Join(dir, "LibLoop.java"), filepath.Join(dir, "cp.txt")
	measure := filepath.Join(dir, "HttpLoop.java") // LibLoop runs its measure
	for _, f := range []struct {
		path string
		data []byte
	}{{pom, jvmLibsPom}, {src, libLoop}, {measure, httpLoop}} {
		if err := os.WriteFile(f.path, f.data, 0o644); err != nil {
			return nil, err
		}
	}
	if _, err := e.runProc(anyCPU, false, "mvn", "-q", "-f", pom, "dependency:build-classpath", "-Dmdep.outputFile="+cpFile); err != nil {
		return nil, skipError{fmt.Errorf("maven could not fetch OkHttp and HttpClient 5: %w", err)}
	}
	cp, err := os.ReadFile(cpFile)
	if err != nil {
		return nil, err
	}
	classpath := dir + ":" + strings.TrimSpace(string(cp))
	if _, err := e.runProc(anyCPU, false, "javac", "-cp", classpath, "-d", dir, src, measure); err != nil {
		return nil, err
	}
	return e.repeat(func() ([]sample, error) {
		var out []sample
		for _, lib := range []struct{ mode, name string }{{"okhttp", "OkHttp 4.12"}, {"apache", "Apache HttpClient 5.6"}} {
			var s [2]sample
			for i, m := range []struct {
				mode, figure string
				warmup       int
			}{
				{lib.mode, lib.name + ", per request on a kept connection", 20000},
				{lib.mode + "-close", lib.name + ", per request, a new connection each", 25000},
			} {
				var err error
				s[i], _, err = e.inside(e.srv, m.figure, clientCPU, false, "java", "-cp", classpath, "LibLoop", m.mode,
					strconv.Itoa(javaMaxN), e.srv.url(), strconv.Itoa(m.warmup), secs(javaWarmupLimit), secs(javaCPU), secs(loopLimit))
				if err != nil {
					return nil, err
				}
			}
			out = append(out, s[0], s[1], perConn(lib.name+", per new connection", s[1], s[0]))
		}
		return out, nil
	})
}
