package sidecar

import (
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestNginxConf(t *testing.T) {
	ups := []netip.AddrPort{netip.MustParseAddrPort("198.18.1.2:8080"), netip.MustParseAddrPort("198.18.2.2:8080")}
	for _, tc := range []struct {
		name      string
		cfg       Config
		want, not []string
	}{
		{"outbound, Istio's defaults", Config{Upstreams: ups, Workers: 2, PerRequestCPU: 500 * time.Microsecond, Retries: 2},
			[]string{"worker_processes 2;", "random two least_conn;", "zone app", "server 198.18.1.2:8080 max_fails=0;", "server 198.18.2.2:8080 max_fails=0;",
				"listen 15001 reuseport", "os.clock() + 0.00025;", "proxy_next_upstream error http_503; proxy_next_upstream_tries 3;",
				"error_page 502 504 = @unavailable;", "for i = 0, 1 do"},
			[]string{"127.0.0.1"}},
		{"round robin, no retries", Config{Upstreams: ups, Workers: 16, PerRequestCPU: time.Millisecond, LBPolicy: "round_robin"},
			[]string{"worker_processes 16;", "os.clock() + 0.0005;", "proxy_next_upstream off;"},
			[]string{"least_conn", "random"}},
		{"random", Config{Upstreams: ups, Workers: 1, LBPolicy: "RANDOM"},
			[]string{"    random;"},
			[]string{"least_conn", "os.clock"}},
		{"inbound", Config{Inbound: true, AppPort: 8080, Workers: 1, PerRequestCPU: 200 * time.Microsecond, Retries: 2},
			[]string{"server 127.0.0.1:8080; keepalive", "listen 15006 reuseport", "os.clock() + 0.0001;"},
			[]string{"zone app", "listen 15001"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf, err := tc.cfg.nginxConf("/run/x", "/usr/lib/nginx/modules")
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(conf, w) {
					t.Errorf("no %q in\n%s", w, conf)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(conf, n) {
					t.Errorf("%q in\n%s", n, conf)
				}
			}
		})
	}
	if _, err := (&Config{LBPolicy: "MAGLEV"}).nginxConf("/run/x", "/m"); err == nil {
		t.Error("MAGLEV: want an error")
	}
}

func TestRules(t *testing.T) {
	out := Config{Intercept: netip.MustParseAddrPort("198.19.0.10:80")}
	in := Config{Inbound: true, AppPort: 8080}
	for cfg, want := range map[*Config]string{
		&out: "-A OUTPUT -p tcp -d 198.19.0.10/32 --dport 80 -j REDIRECT --to-ports 15001",
		&in:  "-A PREROUTING -p tcp --dport 8080 -j REDIRECT --to-ports 15006",
	} {
		if got := cfg.rules(); got != "*nat\n"+want+"\nCOMMIT\n" {
			t.Errorf("rules: got %q, want %q", got, want)
		}
	}
}
