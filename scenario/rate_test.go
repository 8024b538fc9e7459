package scenario

import "testing"

func TestParseRate(t *testing.T) {
	cases := []struct {
		in        string
		perSecond float64
		str       string // String of the parsed rate
		err       string
	}{
		{in: "1000/s", perSecond: 1000, str: "1000/s"},
		{in: "2.5/s", perSecond: 2.5, str: "2.5/s"},
		{in: "60/m", perSecond: 1, str: "1/s"},
		{in: "3600/h", perSecond: 1, str: "1/s"},
		{in: "30/m", perSecond: 0.5, str: "30/m"},
		{in: "1/h", perSecond: 1.0 / 3600, str: "1/h"},
		{in: "1e6/s", perSecond: 1e6, str: "1000000/s"},
		{in: "0.5/s", perSecond: 0.5, str: "30/m"},
		{in: "0/s", err: `invalid rate "0/s": must be greater than 0`},
		{in: "-5/s", err: `invalid rate "-5/s": must be greater than 0`},
		{in: "5e-324/h", err: `invalid rate "5e-324/h": must be greater than 0`},
		{in: "1000", err: `invalid rate "1000": rates need a unit, e.g. 1000/s`},
		{in: "1000/d", err: `invalid rate "1000/d": unknown unit "d"; use s, m or h`},
		{in: "1000/", err: `invalid rate "1000/": unknown unit ""; use s, m or h`},
		{in: "fast/s", err: `invalid rate "fast/s": "fast" is not a number`},
		{in: "inf/s", err: `invalid rate "inf/s": "inf" is not a number`},
		{in: "NaN/s", err: `invalid rate "NaN/s": "NaN" is not a number`},
		{in: "", err: `invalid rate "": want NUMBER/s, NUMBER/m or NUMBER/h, e.g. 1000/s`},
		{in: "lots", err: `invalid rate "lots": want NUMBER/s, NUMBER/m or NUMBER/h, e.g. 1000/s`},
		{in: "10 /s", err: `invalid rate "10 /s": "10 " is not a number`},
	}
	for _, tc := range cases {
		r, err := ParseRate(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParseRate(%q) = %v, %v; want error %s", tc.in, r, err, tc.err)
			}
			continue
		}
		if err != nil || r.PerSecond != tc.perSecond || r.String() != tc.str {
			t.Errorf("ParseRate(%q) = %v (%g/s), %v; want %s (%g/s)", tc.in, r, r.PerSecond, err, tc.str, tc.perSecond)
		}
		if back, err := ParseRate(r.String()); err != nil || back.String() != r.String() {
			t.Errorf("ParseRate(%q) = %v, %v; want %s back", r.String(), back, err, r.String())
		}
	}
}
