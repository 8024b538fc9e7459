package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// bandwidthUnits are tc's rate units with decimal prefixes, in bits per second: "bit"
// units count bits, "bps" units count bytes (tc(8) RATES; Chaos Mesh's bandwidth
// action takes the same spellings). Bit units come first, smallest first, for String.
var bandwidthUnits = []struct {
	name string
	bits float64
}{
	{"bit", 1}, {"kbit", 1e3}, {"mbit", 1e6}, {"gbit", 1e9}, {"tbit", 1e12},
	{"bps", 8}, {"kbps", 8e3}, {"mbps", 8e6}, {"gbps", 8e9}, {"tbps", 8e12},
}

const bandwidthHelp = "use bit, kbit, mbit, gbit or tbit for bits per second, or bps, kbps, mbps, gbps or tbps for BYTES per second (as in tc: 100mbps is 800mbit)"

// ParseBandwidth parses a link rate as tc and Chaos Mesh write it: a number and a unit,
// case-insensitive, with decimal prefixes (k = 1000). bit, kbit, mbit, gbit and tbit
// are bits per second; bps, kbps, mbps, gbps and tbps are BYTES per second, as in tc,
// so "10mbps" is 80 megabits per second. It must be greater than 0.
func ParseBandwidth(s string) (Bandwidth, error) {
	// The number is the longest prefix that is one; what follows is the unit. An
	// exponent needs digits, so "1e6bit" is 1e6 bit and "1ebit" has unit "ebit".
	end := 0
	for i := len(s); i > 0; i-- {
		if decimal.MatchString(s[:i]) {
			end = i
			break
		}
	}
	num, unit := s[:end], strings.ToLower(s[end:])
	switch {
	case num == "":
		return Bandwidth{}, fmt.Errorf("invalid bandwidth %q: want a number and a unit, e.g. 100mbit", s)
	case unit == "":
		return Bandwidth{}, fmt.Errorf("invalid bandwidth %q: give a unit, e.g. %smbit (megabits per second) or %smbps (megabytes per second, as tc reads it)", s, s, s)
	}
	for _, u := range bandwidthUnits {
		if u.name != unit {
			continue
		}
		// num is a decimal, so ParseFloat can fail only out of range, where it returns
		// ±Inf or 0, which the checks below refuse.
		v, _ := strconv.ParseFloat(num, 64)
		bits := v * u.bits
		switch {
		case !(bits > 0):
			return Bandwidth{}, fmt.Errorf("invalid bandwidth %q: must be greater than 0", s)
		case math.IsInf(bits, 0):
			return Bandwidth{}, fmt.Errorf("invalid bandwidth %q: out of range", s)
		}
		return Bandwidth{BitsPerSecond: bits}, nil
	}
	hint := ""
	if strings.HasSuffix(unit, "/s") {
		hint = " (the units already mean per second)"
	}
	return Bandwidth{}, fmt.Errorf("invalid bandwidth %q: unknown unit %q%s; %s", s, s[end:], hint, bandwidthHelp)
}

// String writes the bandwidth in the largest bit unit that keeps the number at least 1.
func (b Bandwidth) String() string {
	u := bandwidthUnits[0]
	for _, c := range bandwidthUnits[:5] {
		if b.BitsPerSecond >= c.bits {
			u = c
		}
	}
	return strconv.FormatFloat(b.BitsPerSecond/u.bits, 'g', 12, 64) + u.name
}
