package scenario

import "testing"

func TestParseBandwidth(t *testing.T) {
	const units = "use bit, kbit, mbit, gbit or tbit for bits per second, or bps, kbps, mbps, gbps or tbps for BYTES per second (as in tc: 100mbps is 800mbit)"
	cases := []struct {
		in   string
		bits float64
		str  string // String of the parsed bandwidth
		err  string
	}{
		{in: "100mbit", bits: 100e6, str: "100mbit"},
		{in: "1gbit", bits: 1e9, str: "1gbit"},
		{in: "1Gbit", bits: 1e9, str: "1gbit"},
		{in: "2.5MBIT", bits: 2.5e6, str: "2.5mbit"},
		{in: "512bit", bits: 512, str: "512bit"},
		{in: "0.5bit", bits: 0.5, str: "0.5bit"},
		{in: "1kbit", bits: 1e3, str: "1kbit"},
		{in: "1500kbit", bits: 1.5e6, str: "1.5mbit"},
		{in: "3tbit", bits: 3e12, str: "3tbit"},
		{in: "5000tbit", bits: 5e15, str: "5000tbit"},
		{in: "1e6bit", bits: 1e6, str: "1mbit"},
		// bps units are bytes, as in tc.
		{in: "1bps", bits: 8, str: "8bit"},
		{in: "10kbps", bits: 80e3, str: "80kbit"},
		{in: "10mbps", bits: 80e6, str: "80mbit"},
		{in: "10MBps", bits: 80e6, str: "80mbit"},
		{in: "1gbps", bits: 8e9, str: "8gbit"},
		{in: "1tbps", bits: 8e12, str: "8tbit"},
		{in: "125000bps", bits: 1e6, str: "1mbit"},
		{in: "0mbit", err: `invalid bandwidth "0mbit": must be greater than 0`},
		{in: "-5mbit", err: `invalid bandwidth "-5mbit": must be greater than 0`},
		{in: "1e-400bit", err: `invalid bandwidth "1e-400bit": must be greater than 0`},
		{in: "-1e400mbit", err: `invalid bandwidth "-1e400mbit": must be greater than 0`},
		{in: "1e400mbit", err: `invalid bandwidth "1e400mbit": out of range`},
		{in: "1e300tbit", err: `invalid bandwidth "1e300tbit": out of range`},
		{in: "100", err: `invalid bandwidth "100": give a unit, e.g. 100mbit (megabits per second) or 100mbps (megabytes per second, as tc reads it)`},
		{in: "100mb", err: `invalid bandwidth "100mb": unknown unit "mb"; ` + units},
		{in: "100Mbit/s", err: `invalid bandwidth "100Mbit/s": unknown unit "Mbit/s" (the units already mean per second); ` + units},
		{in: "1mibit", err: `invalid bandwidth "1mibit": unknown unit "mibit"; ` + units},
		{in: "1ebit", err: `invalid bandwidth "1ebit": unknown unit "ebit"; ` + units},
		{in: "10 mbit", err: `invalid bandwidth "10 mbit": unknown unit " mbit"; ` + units},
		{in: "mbit", err: `invalid bandwidth "mbit": want a number and a unit, e.g. 100mbit`},
		{in: "", err: `invalid bandwidth "": want a number and a unit, e.g. 100mbit`},
		{in: "fast", err: `invalid bandwidth "fast": want a number and a unit, e.g. 100mbit`},
		{in: "infmbit", err: `invalid bandwidth "infmbit": want a number and a unit, e.g. 100mbit`},
	}
	for _, tc := range cases {
		b, err := ParseBandwidth(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParseBandwidth(%q) = %v, %v; want error %s", tc.in, b, err, tc.err)
			}
			continue
		}
		if err != nil || b.BitsPerSecond != tc.bits || b.String() != tc.str {
			t.Errorf("ParseBandwidth(%q) = %v (%g bit/s), %v; want %s (%g bit/s)", tc.in, b, b.BitsPerSecond, err, tc.str, tc.bits)
		}
		if back, err := ParseBandwidth(b.String()); err != nil || back.String() != b.String() {
			t.Errorf("ParseBandwidth(%q) = %v, %v; want %v back", b.String(), back, err, b)
		}
	}
}
