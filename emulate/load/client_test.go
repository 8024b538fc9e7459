package load_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trafficlab/emulate/load"
	"trafficlab/model/library"
	"trafficlab/scenario"
)

func metav1Duration(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }

// TestFromClient: a client's connection settings come from its library profile,
// and what the scenario sets wins.
func TestFromClient(t *testing.T) {
	one, lifetime := 1, metav1.Duration{Duration: time.Minute}
	rate := scenario.Rate{PerSecond: 50}
	for _, tc := range []struct {
		name   string
		client scenario.Client
		check  func(t *testing.T, c load.Config)
	}{
		{"go-net-http", scenario.Client{Threads: 5, Library: "go-net-http"}, func(t *testing.T, c load.Config) {
			p, _ := library.Lookup("go-net-http")
			want := load.Connections{Reuse: p.Reuse, Protocol: p.Protocol, MaxIdlePerHost: p.MaxIdlePerHost,
				IdleTimeout: p.IdleTimeout, IdlePick: p.IdlePick, RetriesStale: true}
			if c.Conn != want || c.Timeout != 30*time.Second {
				t.Errorf("conn %+v timeout %v, want %+v and the 30s default", c.Conn, c.Timeout, want)
			}
		}},
		{"fortio", scenario.Client{Threads: 4, Library: "fortio"}, func(t *testing.T, c load.Config) {
			if c.Conn.Reuse != scenario.ReusePerThread || c.Conn.MaxPerHost != 1 || c.Timeout != 3*time.Second {
				t.Errorf("conn %+v timeout %v", c.Conn, c.Timeout)
			}
		}},
		{"ab aborts its run", scenario.Client{Threads: 4, Library: "ab"}, func(t *testing.T, c load.Config) {
			if !c.AbortsRun || c.Conn.Reuse != scenario.ReuseNone {
				t.Errorf("aborts %v conn %+v", c.AbortsRun, c.Conn)
			}
		}},
		{"the scenario wins", scenario.Client{Threads: 2, Library: "dotnet-httpclient",
			Connections: scenario.Connections{MaxPerHost: &one, MaxLifetime: &lifetime, Protocol: scenario.ProtocolHTTP2}},
			func(t *testing.T, c load.Config) {
				if c.Conn.MaxPerHost != 1 || c.Conn.MaxLifetime != time.Minute || c.Conn.Protocol != scenario.ProtocolHTTP2 ||
					c.Conn.Reuse != scenario.ReuseShared || c.Timeout != 100*time.Second {
					t.Errorf("conn %+v timeout %v", c.Conn, c.Timeout)
				}
			}},
		{"no library", scenario.Client{Rate: &rate, Arrival: scenario.ArrivalPoisson, MaxInFlight: 7}, func(t *testing.T, c load.Config) {
			if c.Conn.Reuse != scenario.ReuseShared || c.Conn.Protocol != scenario.ProtocolHTTP1 || c.Timeout != 30*time.Second ||
				len(c.Phases) != 1 || c.Phases[0].Rate != 50 || c.Arrival != scenario.ArrivalPoisson || c.MaxInFlight != 7 {
				t.Errorf("%+v", c)
			}
		}},
		{"rate curve", scenario.Client{RateCurve: &scenario.RateCurve{Points: []scenario.RatePoint{
			{At: metav1Duration(10 * time.Second), Rate: &scenario.Rate{PerSecond: 10}},
			{At: metav1Duration(20 * time.Second), Rate: &scenario.Rate{PerSecond: 30}},
		}}}, func(t *testing.T, c load.Config) {
			want := []load.Phase{{Rate: 10, RampTo: 10, Duration: 10 * time.Second}, {Rate: 10, RampTo: 30, Duration: 10 * time.Second}, {Rate: 30}}
			if len(c.Phases) != len(want) {
				t.Fatalf("phases %+v, want %+v", c.Phases, want)
			}
			for i := range want {
				if c.Phases[i] != want[i] {
					t.Errorf("phase %d: %+v, want %+v", i, c.Phases[i], want[i])
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := load.FromClient(&tc.client, "http://127.0.0.1:8080/", time.Minute, 1)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
	if _, err := load.FromClient(&scenario.Client{Threads: 1, Library: "netscape"}, "http://x:1/", time.Second, 1); err == nil {
		t.Error("an unknown library was accepted")
	}
}
