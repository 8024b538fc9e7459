package scenario

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// decimal is a number as a percentage or a bandwidth writes it: digits with an optional
// point and exponent. The mantissa and the exponent are its groups.
var decimal = regexp.MustCompile(`^([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))(?:[eE]([-+]?[0-9]+))?$`)

// ParsePercent parses a percentage written with its sign: "3%", "0.5%", "100%". It
// must be between 0% and 100%. A number without the sign is refused rather than
// guessed at: "loss: 3" could mean 3% or, as a fraction, 300%.
func ParsePercent(s string) (Percent, error) {
	num, ok := strings.CutSuffix(s, "%")
	if !ok {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return Percent{}, fmt.Errorf(`invalid percentage %q: want a number and a percent sign, e.g. "3%%"`, s)
		}
		msg := fmt.Sprintf(`invalid percentage %q: write it with a percent sign, e.g. "%s%%"`, s, s)
		if f > 0 && f < 1 {
			// Perhaps a fraction, as netem's C API and many libraries take it.
			msg += fmt.Sprintf(`, or "%s%%" if %s is a fraction`, strconv.FormatFloat(f*100, 'g', 12, 64), s)
		}
		return Percent{}, fmt.Errorf("%s", msg)
	}
	m := decimal.FindStringSubmatch(num)
	if m == nil {
		return Percent{}, fmt.Errorf("invalid percentage %q: %q is not a number", s, num)
	}
	// Dividing by 100 in the exponent keeps the fraction as close to the decimal as a
	// float64 gets: "0.1%" is exactly the float64 nearest 0.001.
	exp := 0
	if m[2] != "" {
		var err error
		if exp, err = strconv.Atoi(m[2]); err != nil {
			return Percent{}, fmt.Errorf("invalid percentage %q: must be between 0%% and 100%%", s)
		}
	}
	f, err := strconv.ParseFloat(m[1]+"e"+strconv.Itoa(exp-2), 64)
	if err != nil || f < 0 || f > 1 {
		return Percent{}, fmt.Errorf("invalid percentage %q: must be between 0%% and 100%%", s)
	}
	if f == 0 {
		f = 0 // not -0
	}
	return Percent{Fraction: f}, nil
}

// String writes the percentage with its sign, as ParsePercent reads it.
func (p Percent) String() string {
	// 12 significant digits hide the rounding of the multiplication.
	return strconv.FormatFloat(p.Fraction*100, 'g', 12, 64) + "%"
}
