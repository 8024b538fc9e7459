package scenario

import (
	"math"
	"strings"
	"testing"

	"trafficlab/examples"
)

// Fuzzers of the loader: decoding, --set, defaults and validation. They start from
// every example and every bad-input case of the tests, and `make test` runs each for
// 10 s; an input one finds a bug with becomes a case of a regular test. Run one
// longer with
//
//	go test -run '^$' -fuzz FuzzLoad -fuzztime 90s ./scenario

// seedDocuments is every example and every document of the bad-input tests.
func seedDocuments(tb testing.TB) [][]byte {
	var docs [][]byte
	for _, ex := range examples.List() {
		data, err := examples.Get(ex.Name)
		if err != nil {
			tb.Fatal(err)
		}
		docs = append(docs, data)
	}
	docs = append(docs, []byte(base), []byte(netBase), []byte(nodesBase), []byte(full))
	for _, c := range loadErrorCases {
		docs = append(docs, []byte(strings.Replace(base, c.old, c.new, 1)))
	}
	for _, c := range networkErrorCases {
		docs = append(docs, []byte(c.in))
	}
	for _, c := range nodeErrorCases {
		docs = append(docs, []byte(c.in))
	}
	return docs
}

// checkLoad checks what Load promises whatever its input: a scenario exactly when no
// diagnostic is an error, every diagnostic located in the file or at a --set, the
// same answer every time, and a scenario within its limits.
func checkLoad(t *testing.T, data []byte, sets []string) {
	sc, _, diags := Load("f.yaml", data, sets)
	if (sc == nil) != diags.HasErrors() {
		t.Fatalf("scenario %v with diagnostics %v", sc != nil, diags)
	}
	for _, d := range diags {
		if d.File != "f.yaml" || d.Msg == "" || d.Line < 0 || d.Col < 0 || (d.Set != "" && d.Line != 0) {
			t.Fatalf("diagnostic %#v", d)
		}
		if d.Set != "" && !containsString(sets, d.Set) {
			t.Fatalf("diagnostic %q names a --set that was not given", d.Error())
		}
	}
	if _, _, again := Load("f.yaml", data, sets); again.Error() != diags.Error() {
		t.Fatalf("diagnostics differ between two loads:\n%s\n---\n%s", diags.Error(), again.Error())
	}
	if sc == nil {
		return
	}
	if d := sc.Spec.Duration.Duration; d <= 0 || d > maxDuration {
		t.Fatalf("valid scenario with duration %s", d)
	}
	pods := 0
	for _, s := range sc.Spec.Services {
		pods += s.Replicas
	}
	nodes := 0
	for _, p := range sc.Spec.Cluster.Nodes {
		nodes += p.Count
	}
	if pods > maxPods || nodes > maxNodes || nodes < 1 {
		t.Fatalf("valid scenario with %d service pods and %d nodes", pods, nodes)
	}
	for _, c := range sc.Spec.Clients {
		if c.Timeout == nil || c.Connections.MaxPerHost == nil || c.Request.HeaderBytes == nil {
			t.Fatalf("client %s lacks its defaults", c.Name)
		}
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// FuzzLoad loads arbitrary documents, with up to a few --set arguments (one a line).
func FuzzLoad(f *testing.F) {
	for _, doc := range seedDocuments(f) {
		f.Add(doc, "")
	}
	for _, c := range setErrorCases {
		f.Add([]byte(base), c.set)
	}
	f.Fuzz(func(t *testing.T, data []byte, set string) {
		var sets []string
		if set != "" {
			sets = strings.SplitN(set, "\n", 4)
		}
		checkLoad(t, data, sets)
	})
}

// FuzzSet applies arbitrary --set arguments to every example.
func FuzzSet(f *testing.F) {
	docs := seedDocuments(f)[:len(examples.List())]
	for i := range docs {
		f.Add(uint8(i), "spec.services[0].replicas=3", "spec.duration=1s")
	}
	for _, c := range setErrorCases {
		f.Add(uint8(0), c.set, "spec.seed=2")
	}
	for _, s := range []string{
		"spec.services[0].pod.serviceTime={distribution: constant, value: 1ms}",
		"spec.cluster.nodes=[{name: a, count: 2}, {name: b, count: 3, cpu: '2'}]",
		"spec.clients[0].rate=1000/s", "spec.clients[0].threads=", "spec.clients[1].phases[0].rate=5/s",
	} {
		f.Add(uint8(1), s, "spec.clients[0].threads=")
	}
	f.Fuzz(func(t *testing.T, doc uint8, a, b string) {
		checkLoad(t, docs[int(doc)%len(docs)], []string{a, b})
	})
}

// FuzzScalars parses the scalars written in a syntax of their own: what parses is
// finite and positive (a percentage from 0), and what it prints parses back to it.
func FuzzScalars(f *testing.F) {
	for _, s := range []string{"1000/s", "60/m", "2.5/s", "1/h", "3%", "0.5%", "100%", "10gbit", "100mbps", "1e300/s", "-1/s", "NaN/s", "5e-324/h"} {
		f.Add(s)
	}
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
	f.Fuzz(func(t *testing.T, s string) {
		if r, err := ParseRate(s); err == nil {
			if !(r.PerSecond > 0) || math.IsInf(r.PerSecond, 0) {
				t.Fatalf("ParseRate(%q) = %v", s, r.PerSecond)
			}
			if back, err := ParseRate(r.String()); err != nil || !close(back.PerSecond, r.PerSecond) {
				t.Fatalf("ParseRate(%q) prints as %q, which parses to %v, %v", s, r.String(), back.PerSecond, err)
			}
		}
		if p, err := ParsePercent(s); err == nil {
			if !(p.Fraction >= 0) || math.IsInf(p.Fraction, 0) {
				t.Fatalf("ParsePercent(%q) = %v", s, p.Fraction)
			}
			if back, err := ParsePercent(p.String()); err != nil || !close(back.Fraction, p.Fraction) {
				t.Fatalf("ParsePercent(%q) prints as %q, which parses to %v, %v", s, p.String(), back.Fraction, err)
			}
		}
		if b, err := ParseBandwidth(s); err == nil {
			if !(b.BitsPerSecond > 0) || math.IsInf(b.BitsPerSecond, 0) {
				t.Fatalf("ParseBandwidth(%q) = %v", s, b.BitsPerSecond)
			}
			if back, err := ParseBandwidth(b.String()); err != nil || !close(back.BitsPerSecond, b.BitsPerSecond) {
				t.Fatalf("ParseBandwidth(%q) prints as %q, which parses to %v, %v", s, b.String(), back.BitsPerSecond, err)
			}
		}
	})
}
