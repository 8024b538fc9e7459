package result

import (
	"encoding/json"
	"strings"
	"testing"
)

// An interval's percentiles are null in JSON when none of its requests succeeded,
// and the numbers otherwise; either way the Point reads back as it was written.
func TestPointLatencyIsNullWithoutSuccess(t *testing.T) {
	cases := []struct {
		name string
		p    Point
		want []string // p50_ms, p90_ms, p99_ms, p999_ms as written
	}{
		{"all failed", Point{TS: 3, Requests: 40, Errors: 40}, []string{"null", "null", "null", "null"}},
		{"none finished", Point{TS: 4}, []string{"null", "null", "null", "null"}},
		{"one succeeded", Point{TS: 5, Requests: 41, Errors: 40, P50MS: 0, P90MS: 1.5, P99MS: 2, P999MS: 2}, []string{"0", "1.5", "2", "2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, err := json.Marshal(c.p)
			if err != nil {
				t.Fatal(err)
			}
			var raw map[string]json.RawMessage
			if err := json.Unmarshal(data, &raw); err != nil {
				t.Fatal(err)
			}
			for i, k := range []string{"p50_ms", "p90_ms", "p99_ms", "p999_ms"} {
				if got := string(raw[k]); got != c.want[i] {
					t.Errorf("%s = %s, want %s in %s", k, got, c.want[i], data)
				}
			}
			if n := strings.Count(string(data), `"p99_ms"`); n != 1 {
				t.Errorf("p99_ms written %d times: %s", n, data)
			}
			var back Point
			if err := json.Unmarshal(data, &back); err != nil || back.P90MS != c.p.P90MS || back.Requests != c.p.Requests || back.TS != c.p.TS {
				t.Errorf("read back %+v (%v), want %+v", back, err, c.p)
			}
		})
	}
}
