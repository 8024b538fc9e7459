package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Rate is a request rate, written NUMBER/UNIT with unit s, m or h: 1000/s, 60/m, 2.5/s.
type Rate struct {
	PerSecond float64
}

// rateUnits are the units a rate may be written in, shortest first, with their seconds.
var rateUnits = []struct {
	name    string
	seconds float64
}{{"s", 1}, {"m", 60}, {"h", 3600}}

// ParseRate parses a rate such as 1000/s, 60/m, 3600/h or 2.5/s. It must be positive.
func ParseRate(s string) (Rate, error) {
	num, unit, ok := strings.Cut(s, "/")
	if !ok {
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return Rate{}, fmt.Errorf("invalid rate %q: rates need a unit, e.g. %s/s", s, s)
		}
		return Rate{}, fmt.Errorf("invalid rate %q: want NUMBER/s, NUMBER/m or NUMBER/h, e.g. 1000/s", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return Rate{}, fmt.Errorf("invalid rate %q: %q is not a number", s, num)
	}
	for _, u := range rateUnits {
		if u.name != unit {
			continue
		}
		r := Rate{PerSecond: v / u.seconds}
		// Checked after the division so that a rate too small to represent is refused too.
		if !(r.PerSecond > 0) {
			return Rate{}, fmt.Errorf("invalid rate %q: must be greater than 0", s)
		}
		return r, nil
	}
	return Rate{}, fmt.Errorf("invalid rate %q: unknown unit %q; use s, m or h", s, unit)
}

// String writes the rate in the largest unit that keeps the number at least 1, so that
// a rate parsed from 60/m prints as 1/s and one from 1/h stays 1/h.
func (r Rate) String() string {
	u := rateUnits[len(rateUnits)-1]
	for _, c := range rateUnits {
		if r.PerSecond*c.seconds >= 1 {
			u = c
			break
		}
	}
	// 12 significant digits hide the rounding of the division in ParseRate.
	return strconv.FormatFloat(r.PerSecond*u.seconds, 'g', 12, 64) + "/" + u.name
}
