package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"trafficlab/result"
)

func pods(counts ...int64) []result.Pod {
	var out []result.Pod
	for i, c := range counts {
		out = append(out, result.Pod{Name: string(rune('a' + i)), Service: "web", Requests: c})
	}
	return out
}

func TestUneven(t *testing.T) {
	cases := []struct {
		counts []int64
		want   bool
	}{
		{[]int64{100, 100, 100}, false},
		{[]int64{100, 0, 100}, true},  // an idle pod
		{[]int64{160, 70, 70}, true},  // busiest over 1.5 × fair (100)
		{[]int64{140, 80, 80}, false}, // within 1.5 ×
		{[]int64{0, 0, 0}, false},     // nothing to spread
		{[]int64{500}, false},         // one pod
	}
	for _, c := range cases {
		if got := Uneven(pods(c.counts...)); got != c.want {
			t.Errorf("Uneven(%v) = %v, want %v", c.counts, got, c.want)
		}
	}
}

func TestExpectedIdle(t *testing.T) {
	// R1's figure: 5 connections on 5 pods leave 1.64 idle on average.
	if got := ExpectedIdle(5, 5); math.Abs(got-1.6384) > 1e-9 {
		t.Errorf("ExpectedIdle(5, 5) = %v, want 1.6384", got)
	}
	if ExpectedIdle(5, 0) != 5 || ExpectedIdle(0, 3) != 0 {
		t.Error("no connections leave every pod idle; no pods, none idle")
	}
}

func TestExplainNamesTheCauseOnlyWhenUneven(t *testing.T) {
	r := &result.Result{Engine: "simulate", ProxyMode: "iptables", Pods: pods(1000, 0, 0, 0, 0),
		Clients: []result.Client{{Name: "caller", Target: "web", ConnectionsOpened: 1, PeakOpen: 1, Requests: 1000}}}
	why := Explain(r, "web")
	for _, want := range []string{"kube-proxy (iptables)", "once per connection", "opened 1 connection (", "1 long-lived connection over", "4.00 pods", "maxLifetime"} {
		if !strings.Contains(why, want) {
			t.Errorf("explanation lacks %q: %s", want, why)
		}
	}
	r.ProxyMode, r.IPVSScheduler = "ipvs", "rr"
	for _, want := range []string{"ipvs rr", "in turn", "at least 4 idle"} {
		if why := Explain(r, "web"); !strings.Contains(why, want) {
			t.Errorf("ipvs rr explanation lacks %q: %s", want, why)
		}
	}
	r.IPVSScheduler = "sh"
	if why := Explain(r, "web"); !strings.Contains(why, "source hashing") {
		t.Errorf("ipvs sh explanation lacks source hashing: %s", why)
	}
	r.ProxyMode, r.IPVSScheduler = "userspace", ""
	if why := Explain(r, "web"); !strings.Contains(why, "proxy process") || strings.Contains(why, "conntrack") {
		t.Errorf("userspace explanation must name the proxy process, not conntrack: %s", why)
	}
	r.Pods = pods(200, 200, 200, 200, 200)
	if why := Explain(r, "web"); why != "" {
		t.Errorf("an even spread needs no explanation, got %q", why)
	}
}

func TestTextWrapsAndShowsBars(t *testing.T) {
	r := &result.Result{Engine: "simulate", Scenario: "s", DurationS: 60, ProxyMode: "iptables",
		Requests: result.Requests{Total: 1000, OK: 1000}, Pods: pods(750, 250),
		Clients: []result.Client{{Name: "caller", Target: "web", ConnectionsOpened: 2, PeakOpen: 2, Requests: 1000}}}
	var b bytes.Buffer
	if err := Text(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, strings.Repeat("█", 23)) || !strings.Contains(out, "75.0%") {
		t.Errorf("expected a 75 %% bar of 23 blocks:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Why") && len([]rune(line)) > 92 {
			t.Errorf("explanation line longer than 92 columns: %q", line)
		}
	}
}
