package sweep

import (
	"strings"
	"testing"

	"trafficlab/result"
)

var replicasAndThreads = []Axis{
	{"spec.services[0].replicas", []string{"8", "2", "4"}},
	{"spec.clients[0].threads", []string{"5", "20"}},
}

func TestParseQuery(t *testing.T) {
	cases := []struct {
		q     string
		max   bool
		axis  int
		conds []Cond
		err   string
	}{
		{q: "min spec.services[0].replicas where p99 < 50ms and errors == 0", axis: 0,
			conds: []Cond{{Op: "<", Value: 50}, {Op: "==", Value: 0}}},
		{q: "max spec.clients[0].threads where p99.9<=1s and max_pod_share < 30% and rps >= 1000/s", max: true, axis: 1,
			conds: []Cond{{Op: "<=", Value: 1000}, {Op: "<", Value: 0.3}, {Op: ">=", Value: 1000}}},
		{q: "min spec.services[0].replicas where refused != 0", axis: 0, conds: []Cond{{Op: "!=", Value: 0}}},
		{q: "min spec.services[0].replicas where service.cart-v2.p99 < 20ms and edge.front.cart-v2.errors == 0", axis: 0,
			conds: []Cond{{Op: "<", Value: 20}, {Op: "==", Value: 0}}},
		{q: "min spec.services[0].replicas where edge.front.cart.p99 < 5", err: "write it as a duration"},
		{q: "min spec.services[0].replicas where service.cart.p42 < 1ms", err: "no figure service.cart.p42"},
		{q: "min spec.services[0].replicas where edge.cart.errors < 1", err: "no figure edge.cart.errors"},
		{q: "smallest replicas", err: `want "min PATH where`},
		{q: "min spec.seed where p99 < 1ms", err: "spec.seed is not swept"},
		{q: "min spec.services[0].replicas where p99 < 50", err: "write it as a duration"},
		{q: "min spec.services[0].replicas where max_pod_share < 0.3", err: "write it as a percentage"},
		{q: "min spec.services[0].replicas where errors == none", err: `errors is a number: "none" is not`},
		{q: "min spec.services[0].replicas where p42 < 1ms", err: "no figure p42"},
		{q: "min spec.services[0].replicas where p99 ~ 1ms", err: "want FIGURE OP VALUE"},
		{q: "min spec.services[0].replicas where p99 < -5ms", err: "p99_ms is never negative"},
		{q: "min spec.services[0].replicas where errors < NaN", err: "NaN is not a finite number"},
		{q: "min spec.services[0].replicas where rps > +Inf", err: "+Inf is not a finite number"},
		{q: "min spec.services[0].replicas where errors <= -1", err: "errors is never negative"},
		{q: "", err: `want "min PATH where`},
		{q: "   ", err: `want "min PATH where`},
	}
	for _, c := range cases {
		q, err := ParseQuery(c.q, replicasAndThreads)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.q, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.q, err)
			continue
		}
		if q.Max != c.max || q.Axis != c.axis || len(q.Conds) != len(c.conds) {
			t.Errorf("%s: %+v", c.q, q)
			continue
		}
		for i, want := range c.conds {
			if got := q.Conds[i]; got.Op != want.Op || got.Value != want.Value {
				t.Errorf("%s: condition %d is %s %v, want %s %v", c.q, i, got.Op, got.Value, want.Op, want.Value)
			}
		}
	}
	axes := []Axis{{"spec.cluster.proxyMode", []string{"iptables", "ipvs"}}}
	if _, err := ParseQuery("min spec.cluster.proxyMode where p99 < 1ms", axes); err == nil ||
		!strings.Contains(err.Error(), "do not compare") {
		t.Errorf("proxy modes have no smallest, yet: %v", err)
	}
}

// point builds a sweep point whose runs have these p99s (ms), one per seed.
func point(values []string, p99s ...float64) result.SweepPoint {
	p := result.SweepPoint{Values: values}
	for _, v := range p99s {
		p.Runs = append(p.Runs, result.SweepRun{Figures: map[string]float64{"p99_ms": v, "errors": 0}})
	}
	return p
}

func TestAnswer(t *testing.T) {
	// Values are listed out of order (8, 2, 4): "min" is by value, not by position.
	sw := &result.Sweep{Parameters: []string{"spec.services[0].replicas", "spec.clients[0].threads"}, Points: []result.SweepPoint{
		point([]string{"8", "5"}, 10, 11),
		point([]string{"8", "20"}, 30, 31),
		point([]string{"2", "5"}, 60, 70),
		point([]string{"2", "20"}, 90, 95),
		point([]string{"4", "5"}, 40, 45),
		// One seed over the bar: 4 replicas do not answer for 20 threads.
		point([]string{"4", "20"}, 45, 55),
	}}
	cases := []struct {
		q    string
		want map[string]string // threads → replicas, "" for none
	}{
		{"min spec.services[0].replicas where p99 < 50ms and errors == 0", map[string]string{"5": "4", "20": "8"}},
		{"max spec.services[0].replicas where p99 > 50ms", map[string]string{"5": "2", "20": "2"}},
		{"min spec.services[0].replicas where p99 < 10ms", map[string]string{"5": "", "20": ""}},
		// No run has this call: no point meets a condition on it.
		{"min spec.services[0].replicas where edge.a.b.errors == 0", map[string]string{"5": "", "20": ""}},
	}
	for _, c := range cases {
		q, err := ParseQuery(c.q, replicasAndThreads)
		if err != nil {
			t.Fatal(err)
		}
		if unknown := q.Unknown(sw); strings.Contains(c.q, "edge.a.b") != (len(unknown) == 1) {
			t.Errorf("%s: unknown figures %v", c.q, unknown)
		}
		f := q.Answer(sw, replicasAndThreads)
		if len(f.Answers) != 2 || f.Parameter != "spec.services[0].replicas" {
			t.Fatalf("%s: %+v", c.q, f)
		}
		for _, a := range f.Answers {
			got := ""
			if a.Value != nil {
				got = *a.Value
				if sw.Points[*a.Point].Values[0] != got {
					t.Errorf("%s: answer %s points at %v", c.q, got, sw.Points[*a.Point].Values)
				}
			}
			if want := c.want[a.Others[0]]; got != want {
				t.Errorf("%s: threads=%s answered %q, want %q", c.q, a.Others[0], got, want)
			}
		}
	}
}
