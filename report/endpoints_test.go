package report

import (
	"bytes"
	"strings"
	"testing"

	"trafficlab/model/kubeproxy"
	"trafficlab/result"
)

// Connections refused while a service had no ready endpoint are explained, on the
// text and the page alike, unless the errors explanation already names those spans.
func TestNoEndpointsExplainsTheRefusals(t *testing.T) {
	// empty is a run of 5 s against web, whose ready endpoints per second are ready;
	// each second without one refuses 6,000 connections.
	empty := func(replicas int, ready ...int) *result.Result {
		r := &result.Result{Engine: "simulate", Scenario: "s", DurationS: float64(len(ready)), ProxyMode: kubeproxy.Iptables,
			Clients:           []result.Client{{Name: "load", Target: "web", Replicas: 4}},
			Services:          []result.Service{{Name: "web", Replicas: replicas, OnSigterm: "exit"}},
			TimelineIntervalS: 1,
		}
		for i, n := range ready {
			pt := result.Point{TS: float64(i), Requests: 6000, ReadyEndpoints: map[string]int{"web": n}, Replicas: map[string]int{"web": replicas}}
			if n == 0 {
				pt.Errors, pt.ErrorsByKind = 6000, &result.Errors{ConnectionRefused: 6000}
				r.Errors.ConnectionRefused += 6000
			}
			r.Timeline = append(r.Timeline, pt)
		}
		r.Requests = result.Requests{Total: 6000 * int64(len(ready)), Failed: r.Errors.ConnectionRefused}
		r.Requests.OK = r.Requests.Total - r.Requests.Failed
		return r
	}
	withPods := func(r *result.Result) *result.Result {
		r.Pods = []result.Pod{{Name: "web-0", Service: "web", Node: "n-0", Requests: r.Requests.OK}}
		return r
	}
	cases := []struct {
		name      string
		r         *result.Result
		want, not []string
	}{
		{"no replicas", empty(0, 0, 0, 0, 0, 0),
			[]string{"No ready endpoint: web had none for the whole run (spec.replicas is 0: give it replicas). " +
				"While a Service has no ready endpoint, kube-proxy REJECTs new connections to its ClusterIP, so the client " +
				"sees each one refused at once: 30000 connections were refused meanwhile."},
			[]string{"No section of the text report explains"}},
		{"a pod never ready", withPods(empty(1, 0, 0, 0, 0, 0)),
			[]string{"web had none for the whole run (none of its 1 pod became ready)."}, []string{"spec.replicas is 0"}},
		{"ready late", withPods(empty(1, 0, 0, 1, 1, 1)),
			[]string{"No ready endpoint: web had none 0s–2s.", "12000 connections were refused meanwhile."}, []string{"had none for the whole run"}},
		{"always ready", withPods(empty(1, 1, 1, 1, 1, 1)), nil, []string{"No ready endpoint"}},
		{"no endpoint, but nothing refused", func() *result.Result {
			r := withPods(empty(1, 0, 1, 1, 1, 1))
			r.Timeline[0].Errors, r.Timeline[0].ErrorsByKind = 0, nil
			r.Errors, r.Requests.Failed, r.Requests.OK = result.Errors{}, 0, r.Requests.Total
			return r
		}(), nil, []string{"No ready endpoint"}},
		// The errors explanation names the spans among the refusals no pod caused.
		{"scaled: the errors explanation says it", scaled(), []string{"No ready endpoint: web 5s–6s."}, []string{"web had none"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Text(&b, c.r); err != nil {
				t.Fatal(err)
			}
			text := flat(b.String())
			page := flat(write(t, c.r, HTMLOptions{}))
			for _, w := range c.want {
				if !strings.Contains(text, flat(w)) {
					t.Errorf("report lacks %q:\n%s", w, b.String())
				}
				if !strings.Contains(page, flat(w)) {
					t.Errorf("the page lacks %q", w)
				}
			}
			for _, w := range c.not {
				if strings.Contains(text, flat(w)) {
					t.Errorf("report has %q:\n%s", w, b.String())
				}
				if strings.Contains(page, flat(w)) {
					t.Errorf("the page has %q", w)
				}
			}
		})
	}
}
