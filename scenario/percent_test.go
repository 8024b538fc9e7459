package scenario

import "testing"

func TestParsePercent(t *testing.T) {
	cases := []struct {
		in       string
		fraction float64
		str      string // String of the parsed percentage
		err      string
	}{
		{in: "3%", fraction: 0.03, str: "3%"},
		{in: "0.5%", fraction: 0.005, str: "0.5%"},
		{in: "0.1%", fraction: 0.001, str: "0.1%"},
		{in: "100%", fraction: 1, str: "100%"},
		{in: "0%", fraction: 0, str: "0%"},
		{in: "-0%", fraction: 0, str: "0%"},
		{in: "+3%", fraction: 0.03, str: "3%"},
		{in: ".5%", fraction: 0.005, str: "0.5%"},
		{in: "5.%", fraction: 0.05, str: "5%"},
		{in: "1e1%", fraction: 0.1, str: "10%"},
		{in: "25E-1%", fraction: 0.025, str: "2.5%"},
		{in: "33.333%", fraction: 0.33333, str: "33.333%"},
		{in: "1e-400%", fraction: 0, str: "0%"},
		{in: "3", err: `invalid percentage "3": write it with a percent sign, e.g. "3%"`},
		{in: "0", err: `invalid percentage "0": write it with a percent sign, e.g. "0%"`},
		{in: "0.03", err: `invalid percentage "0.03": write it with a percent sign, e.g. "0.03%", or "3%" if 0.03 is a fraction`},
		{in: "100.5%", err: `invalid percentage "100.5%": must be between 0% and 100%`},
		{in: "-1%", err: `invalid percentage "-1%": must be between 0% and 100%`},
		{in: "1e400%", err: `invalid percentage "1e400%": must be between 0% and 100%`},
		{in: "1e99999999999999999999%", err: `invalid percentage "1e99999999999999999999%": must be between 0% and 100%`},
		{in: "%", err: `invalid percentage "%": "" is not a number`},
		{in: "3 %", err: `invalid percentage "3 %": "3 " is not a number`},
		{in: "3%%", err: `invalid percentage "3%%": "3%" is not a number`},
		{in: "inf%", err: `invalid percentage "inf%": "inf" is not a number`},
		{in: "NaN%", err: `invalid percentage "NaN%": "NaN" is not a number`},
		{in: "0x10%", err: `invalid percentage "0x10%": "0x10" is not a number`},
		{in: "1/2%", err: `invalid percentage "1/2%": "1/2" is not a number`},
		{in: "", err: `invalid percentage "": want a number and a percent sign, e.g. "3%"`},
		{in: "lots", err: `invalid percentage "lots": want a number and a percent sign, e.g. "3%"`},
		{in: "%3", err: `invalid percentage "%3": want a number and a percent sign, e.g. "3%"`},
	}
	for _, tc := range cases {
		p, err := ParsePercent(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParsePercent(%q) = %v, %v; want error %s", tc.in, p, err, tc.err)
			}
			continue
		}
		if err != nil || p.Fraction != tc.fraction || p.String() != tc.str {
			t.Errorf("ParsePercent(%q) = %v (%g), %v; want %s (%g)", tc.in, p, p.Fraction, err, tc.str, tc.fraction)
		}
		if back, err := ParsePercent(p.String()); err != nil || back != p {
			t.Errorf("ParsePercent(%q) = %v, %v; want %v back", p.String(), back, err, p)
		}
	}
}
