package sweep

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSet(t *testing.T) {
	cases := []struct {
		arg    string
		path   string
		values []string
		err    string
	}{
		{"spec.services[0].replicas=2,3,4", "spec.services[0].replicas", []string{"2", "3", "4"}, ""},
		{"spec.services[0].replicas=2..5", "spec.services[0].replicas", []string{"2", "3", "4", "5"}, ""},
		{"spec.services[0].replicas=1,4..6,10", "spec.services[0].replicas", []string{"1", "4", "5", "6", "10"}, ""},
		{"spec.cluster.proxyMode=iptables", "spec.cluster.proxyMode", []string{"iptables"}, ""},
		// Flow YAML keeps its commas; so do quoted strings.
		{"spec.cluster.network={latency: 1ms, loss: '1%'},{latency: 2ms}", "spec.cluster.network",
			[]string{"{latency: 1ms, loss: '1%'}", "{latency: 2ms}"}, ""},
		{`spec.clients[0].name="a,b",c`, "spec.clients[0].name", []string{`"a,b"`, "c"}, ""},
		{"spec.seed", "", nil, "want PATH=VALUE"},
		{"=1,2", "", nil, "want PATH=VALUE"},
		{"spec.seed=1,2,1", "", nil, `"1" is given twice`},
		{"spec.seed=5..2", "", nil, "backwards"},
		{"spec.seed=1..x", "", nil, "two integers"},
		{"spec.seed=1..5000", "", nil, "over 1000 values"},
		{"spec.services[0].replicas=2,,4", "", nil, "value 2 of 3 is empty"},
		{"spec.services[0].replicas=2,4,", "", nil, "value 3 of 3 is empty"},
		{"spec.services[0].replicas=,2", "", nil, "value 1 of 2 is empty"},
		{"spec.services[0].replicas=2, ,4", "", nil, "value 2 of 3 is empty"},
		{"spec.services[0].replicas=", "spec.services[0].replicas", []string{""}, ""},
		{"spec.services[0].replicas=2,null", "spec.services[0].replicas", []string{"2", "null"}, ""},
	}
	for _, c := range cases {
		a, err := ParseSet(c.arg)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.arg, err, c.err)
			}
			continue
		}
		if err != nil || a.Path != c.path || !reflect.DeepEqual(a.Values, c.values) {
			t.Errorf("%s: %+v %v, want %s %q", c.arg, a, err, c.path, c.values)
		}
	}
}

func TestGridFirstAxisSlowest(t *testing.T) {
	got := Grid([]Axis{{"a", []string{"1", "2"}}, {"b", []string{"x", "y", "z"}}})
	var sets []string
	for _, p := range got {
		sets = append(sets, strings.Join(p.Sets, " "))
	}
	want := []string{"a=1 b=x", "a=1 b=y", "a=1 b=z", "a=2 b=x", "a=2 b=y", "a=2 b=z"}
	if !reflect.DeepEqual(sets, want) {
		t.Errorf("grid %q, want %q", sets, want)
	}
	if !reflect.DeepEqual(got[4].Values, []string{"2", "y"}) {
		t.Errorf("point 4 values %q", got[4].Values)
	}
	if one := Grid(nil); len(one) != 1 || len(one[0].Sets) != 0 {
		t.Errorf("no axes: %+v, want the scenario itself once", one)
	}
}

func TestOrderReadsAnAxisWithOneKind(t *testing.T) {
	cases := []struct {
		values []string
		want   []float64
	}{
		{[]string{"3", "1.5", "10"}, []float64{3, 1.5, 10}},
		// Among quantities 500m is half a core, not 500 minutes.
		{[]string{"500m", "1", "2"}, []float64{0.5, 1, 2}},
		{[]string{"250ms", "1s", "1m30s"}, []float64{0.25, 1, 90}},
		{[]string{"1%", "0.5%"}, []float64{0.01, 0.005}},
		{[]string{"1000/s", "60/m"}, []float64{1000, 1}},
		{[]string{"100mbit", "1gbit"}, []float64{1e8, 1e9}},
	}
	for _, c := range cases {
		got, err := order(c.values)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("order(%q) = %v %v, want %v", c.values, got, err, c.want)
		}
	}
	if _, err := order([]string{"iptables", "ipvs"}); err == nil {
		t.Error("proxy modes have no order, yet order() gave one")
	}
}

func TestParseSetsRefusesAPathGivenTwice(t *testing.T) {
	cases := []struct {
		args  []string
		axes  int
		fixed int
		err   string
	}{
		{[]string{"spec.services[0].replicas=1..3", "spec.clients[0].threads=5,20", "spec.seed=4"}, 2, 1, ""},
		{[]string{"spec.services[0].replicas=1..3", "spec.services[0].replicas=4,5"}, 0, 0, "one --set, e.g. spec.services[0].replicas=1..3,4,5"},
		{[]string{"spec.services[0].replicas=1..3", "spec.services[0].replicas=4"}, 0, 0, "already given by --set spec.services[0].replicas=1..3"},
		{[]string{"spec.services[0].replicas=4", "spec.services[0].replicas=1..3"}, 0, 0, "already given"},
		{[]string{"spec.seed=4", "spec.seed=5"}, 0, 0, "already given"},
	}
	for _, c := range cases {
		axes, fixed, err := ParseSets(c.args)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil || len(axes) != c.axes || len(fixed) != c.fixed {
			t.Errorf("%q: %d axes, %d fixed, %v; want %d, %d", c.args, len(axes), len(fixed), err, c.axes, c.fixed)
		}
	}
}
