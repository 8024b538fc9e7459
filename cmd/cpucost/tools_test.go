package main

import (
	"testing"
	"time"
)

// abReport is ab 2.3's report, trimmed, for a run with failures.
const abReport = `This is ApacheBench, Version 2.3 <$Revision$>

Benchmarking 127.0.0.1 (be patient).....done

Document Path:          /
Document Length:        13 bytes

Concurrency Level:      10
Time taken for tests:   0.184 seconds
Complete requests:      2000
Failed requests:        3
   (Connect: 0, Receive: 0, Length: 3, Exceptions: 0)
Non-2xx responses:      2
Total transferred:      260000 bytes
Requests per second:    10877.27 [#/sec] (mean)
`

func TestParseAB(t *testing.T) {
	c, err := parseAB(abReport)
	if want := (loopCounts{2000, 5, 184 * time.Millisecond}); err != nil || c != want {
		t.Errorf("parseAB = %+v, %v; want %+v", c, err, want)
	}
	if _, err := parseAB("ab: invalid URL\n"); err == nil {
		t.Error("parseAB of a report without \"Complete requests\": no error")
	}
}

func TestParseCounts(t *testing.T) {
	c, err := parseCounts("some warning\n200 1 1500000\n")
	if want := (loopCounts{200, 1, 1500 * time.Millisecond}); err != nil || c != want {
		t.Errorf("parseCounts = %+v, %v; want %+v", c, err, want)
	}
	if _, err := parseCounts("Traceback (most recent call last):\n"); err == nil {
		t.Error("parseCounts of a traceback: no error")
	}
}

func TestAggregate(t *testing.T) {
	rows := aggregate("c", []sample{
		{"a", "µs/req", 1, &runInfo{N: 10, Rate: 100}},
		{"b", "µs/conn", 5, nil},
		{"a", "µs/req", 3, &runInfo{N: 8, Rate: 300}},
		{"b", "µs/conn", 7, nil},
	})
	if len(rows) != 2 || rows[0].Figure != "a" || rows[1].Figure != "b" {
		t.Fatalf("rows %+v: want figures a, b", rows)
	}
	a, b := rows[0], rows[1]
	if a.Mean != 2 || a.Min != 1 || a.Max != 3 || a.runInfo == nil || a.N != 8 || a.Rate != 200 {
		t.Errorf("a = %+v %+v: want mean 2 in 1–3, N 8 (the smaller), rate 200", a, a.runInfo)
	}
	if b.Mean != 6 || b.runInfo != nil {
		t.Errorf("b = %+v: want mean 6, no run", b)
	}
}
