package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// count writes n with thousands separators, as the document's prose does: 1,234,567.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// whole is x rounded to a whole number, with separators.
func whole(x float64) string { return count(int64(math.Round(x))) }

// pct writes a share (0..1) as a percentage with the given decimals: "17 %".
func pct(share float64, decimals int) string {
	return strconv.FormatFloat(share*100, 'f', decimals, 64) + " %"
}

// millis writes a latency in ms to a tenth of a millisecond: 0.2, 53.8, 1011.9.
func millis(ms float64) string { return strconv.FormatFloat(ms, 'f', 1, 64) }

// micros writes a model's CPU figure in µs, to the digits it has: 35.6 µs, 36 µs.
func micros(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', -1, 64) + " µs"
}

// span writes a run's length as the document names it: 60 s, 10 min, 1 h.
func span(s float64) string {
	switch {
	case s >= 3600 && math.Mod(s, 3600) == 0:
		return fmt.Sprintf("%g h", s/3600)
	case s >= 600 && math.Mod(s, 60) == 0:
		return fmt.Sprintf("%g min", s/60)
	}
	return fmt.Sprintf("%g s", s)
}

// plural writes n and the noun, adding an s unless n is 1.
func plural(n int64, noun string) string {
	if n == 1 {
		return count(n) + " " + noun
	}
	return count(n) + " " + noun + "s"
}

// and joins a list as prose: "a", "a and b", "a, b and c".
func and(items []string) string {
	switch len(items) {
	case 0:
		return "none"
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// sets writes --set overrides as a command line would take them, in backquotes.
func sets(ss []string) string {
	var parts []string
	for _, s := range ss {
		parts = append(parts, "--set "+s)
	}
	return "`" + strings.Join(parts, " ") + "`"
}
