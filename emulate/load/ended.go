package load

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"trafficlab/result"
)

// MaxEndedErrors bounds the distinct errors a shard keeps, and a Report (and
// emulate's merge of them): vegeta lists every distinct message, but one with a
// local port in it (a reset on each of many connections) is distinct per
// connection, and a report of thousands of them says no more than its first
// hundred while it costs memory for the whole run.
const MaxEndedErrors = 100

// ended sums up every request that ended, failures included, as vegeta's report
// does (lib/metrics.go, Metrics.Add): the tally every engine keeps, with the
// status codes and the distinct errors. The Report's Ended. Times are nanoseconds
// since the run's start. Recording costs no allocation but for a failed round trip
// while fewer than MaxEndedErrors distinct errors are kept (its message is written
// to compare it).
type ended struct {
	result.EndedTally
	codes  map[int]int64 // a handful of keys: no allocation once seen
	errors []firstError
}

// firstError is a distinct error and when it first ended, to order the errors of
// several shards, or of several Reports, by first sight.
type firstError struct {
	at   int64
	e    result.EndedError
	code int // an error status's; 0 for a failed round trip
}

func newEnded() ended {
	return ended{EndedTally: result.NewEndedTally(), codes: map[int]int64{}}
}

// add counts o, an ended request (not an abandoned one), with its times since
// the run's start.
func (x *ended) add(o *outcome, sent, end int64, cfg *Config) {
	// vegeta (lib/attack.go, Attacker.hit) counts the bytes of an answer read whole.
	var out, in int64
	if o.code != 0 {
		out, in = cfg.BodyBytes, o.bytesIn
	}
	x.Add(clampLatency(o.latency), sent, end, out, in)
	x.codes[o.code]++
	if o.kind == kindOK || len(x.errors) >= MaxEndedErrors {
		return
	}
	if o.err == nil {
		// An error status reads as its status line: one kept with the same code is
		// the same, found without writing the message (an overloaded service's 503s
		// are many).
		for _, f := range x.errors {
			if f.code == o.code {
				return
			}
		}
	}
	e := endedError(o, cfg)
	for _, f := range x.errors {
		if f.e.Message == e.Message {
			return
		}
	}
	x.errors = append(x.errors, firstError{at: end, e: e, code: o.code})
}

// endedError is a failure as vegeta's client words it: Go's http.Client wraps a
// transport error in a url.Error ("Get \"http://…\": dial tcp …: connection
// refused"), and an error status is the response's status line (Attacker.hit sets
// res.Error = r.Status).
func endedError(o *outcome, cfg *Config) result.EndedError {
	e := result.EndedError{Kind: o.kind.String(), Method: cfg.Method}
	if o.kind == kindOther {
		e.Kind = ""
	}
	if o.err != nil {
		method := cmp.Or(cfg.Method, http.MethodGet)
		e.Message = (&url.Error{Op: method[:1] + strings.ToLower(method[1:]), URL: cfg.Target, Err: o.err}).Error()
	} else {
		e.Message = strconv.Itoa(o.code) + " " + http.StatusText(o.code)
	}
	return e
}

// merge adds y's requests into x.
func (x *ended) merge(y *ended) {
	x.Merge(&y.EndedTally)
	for code, n := range y.codes {
		x.codes[code] += n
	}
	x.errors = mergeErrors(x.errors, y.errors)
}

// MergeEndedErrors is the distinct errors of several Reports, whose times share
// an epoch, in the order first seen: the first MaxEndedErrors of them, as one
// Report of all their requests would list them.
func MergeEndedErrors(reps []*Report) []result.EndedError {
	var all []firstError
	for _, rep := range reps {
		if rep.Ended == nil {
			continue
		}
		var mine []firstError
		for i, e := range rep.Ended.Errors {
			mine = append(mine, firstError{at: rep.EndedErrorsAtNS[i], e: e})
		}
		all = mergeErrors(all, mine)
	}
	var out []result.EndedError
	for _, f := range all {
		out = append(out, f.e)
	}
	return out
}

// mergeErrors is the distinct errors of a and b in the order first seen, the first
// MaxEndedErrors of them. Each list keeps its first MaxEndedErrors, so an error
// among the first MaxEndedErrors of both is in one of them.
func mergeErrors(a, b []firstError) []firstError {
	all := slices.Concat(a, b)
	slices.SortStableFunc(all, func(p, q firstError) int { return cmp.Compare(p.at, q.at) })
	var out []firstError
	for _, f := range all {
		if len(out) == MaxEndedErrors {
			break
		}
		if !slices.ContainsFunc(out, func(g firstError) bool { return g.e.Message == f.e.Message }) {
			out = append(out, f)
		}
	}
	return out
}

// result is the Report's Ended; all zero when no request ended, as vegeta's.
func (x *ended) result(startUnixNS int64) *result.Ended {
	r := x.Ended()
	r.StartUnixNS = startUnixNS
	for code, n := range x.codes {
		r.StatusCodes[strconv.Itoa(code)] = n
	}
	for _, f := range x.errors {
		r.Errors = append(r.Errors, f.e)
	}
	return r
}

// MergeEnded sums up the client pods' ended requests as one vegeta report of them
// all would: sums add, extremes and the sending window span them all, and the
// distinct errors come in the order first seen. Every client pod starts at one
// instant (the engine gives each its Config.Start), so their times since the start
// share an epoch. nil when a Report has no Ended.
func MergeEnded(reps []*Report) *result.Ended {
	all := result.NewEndedTally()
	codes := map[string]int64{}
	var start *int64
	for _, rep := range reps {
		x := rep.Ended
		if x == nil {
			return nil
		}
		if rep.Requests.Total == 0 {
			continue // its zero extremes are no request's
		}
		if start == nil {
			start = &x.StartUnixNS
		}
		all.Merge(&rep.EndedTally)
		for code, k := range x.StatusCodes {
			codes[code] += k
		}
	}
	sum := all.Ended()
	sum.StatusCodes = codes
	if start != nil {
		sum.StartUnixNS = *start
	}
	sum.Errors = MergeEndedErrors(reps)
	return sum
}
