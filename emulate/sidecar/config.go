// Package sidecar runs the stand-in for an Istio sidecar in an emulated pod. Envoy
// is not packaged where this project's machines install from, so nginx takes its
// place, configured to keep the parts of Envoy's threading model that the scenario's
// sidecar describes (model/sidecar has Envoy's rules and their sources):
//
//   - Worker threads: nginx's worker processes, one per Envoy worker
//     (worker_processes). Each is one event loop that owns the connections it
//     accepted, as an Envoy worker does, and each listener has a socket per worker
//     (listen … reuseport), so the kernel picks a connection's worker from a hash of
//     its 4-tuple, as Envoy's default enable_reuse_port does (sidecar.AssignWorker).
//     HAProxy 2.6, the packaged alternative, hands an accepted connection to the
//     least loaded thread instead (tune.listener.multi-queue, on by default), which
//     balances what Envoy leaves to the kernel. A worker accepts every connection
//     waiting when it turns to its listener (multi_accept), as Envoy's listener
//     does without max_connections_to_accept_per_socket_event (listener.proto);
//     nginx's default of one a turn would leave new connections' requests waiting
//     in the kernel while answers already in the worker go ahead of them.
//   - The work per request: each worker spends the sidecar's perRequestCPU on its own
//     CPU clock, half when it routes the request and half when it relays the answer
//     (simulate/mesh does the same), in a Lua loop (the Lua module's os.clock is the
//     worker process's CPU time, so a worker waiting for the CPU does not count it
//     as done). nginx's own proxying comes on top (Overhead).
//   - The CPU limit: the workers run in a control group of their own with the
//     proxy container's limit (the caller makes it).
//   - Interception: iptables REDIRECT in the pod's namespace, as Istio's init
//     container installs it (tools/istio-iptables): a client pod's connections to
//     the Service go to port 15001, a service pod's incoming ones to 15006.
//   - The load balancer: an outbound sidecar picks a pod per request itself, not
//     through the ClusterIP, from an upstream of the pods' addresses. LEAST_REQUEST
//     is nginx's "random two least_conn": two random picks, the one with fewer
//     requests in flight, over counts all workers share (zone), as Envoy's hosts'
//     rq_active are; ROUND_ROBIN and RANDOM are nginx's round robin and random.
//   - Pools: idle upstream connections are kept per worker (keepalive), one request
//     at a time each (HTTP/1.1), without nginx's per-connection request limits or a
//     timeout under Istio's hour.
//   - Retries: Istio's default route policy, two retries on a connect failure or a
//     503 (proxy_next_upstream error http_503), on another pod; a failed request is
//     a 503, as Envoy answers it (nginx's own would be 502).
//
// Not emulated (emulate refuses them): circuit breakers, other retry policies, HTTP/2
// upstream, a sidecar on a pod that calls other services, and endpoints that change
// during the run (nginx would need a reload where Envoy takes an EDS update).
package sidecar

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"time"

	modelsidecar "trafficlab/model/sidecar"
)

// Ports of Istio's sidecar (pilot/pkg/model: the outbound and inbound capture
// ports; 15000 is Envoy's admin port, which here is a unix socket instead).
const (
	OutboundPort = 15001
	InboundPort  = 15006
)

// Config is one sidecar.
type Config struct {
	// Inbound: in front of a service pod's app on AppPort; else a client pod's,
	// sending to Upstreams what the app sends to Intercept.
	Inbound bool
	AppPort int
	// Intercept is the Service's ClusterIP and port the client pod's app calls.
	Intercept netip.AddrPort
	// Upstreams are the Service's pods.
	Upstreams []netip.AddrPort
	// Workers is Envoy's --concurrency, at least 1.
	Workers int
	// PerRequestCPU is a worker's time for one request and its answer.
	PerRequestCPU time.Duration
	// LBPolicy is Istio's name of the outbound load balancer ("" is LEAST_REQUEST).
	LBPolicy string
	// Retries after a failed try (Istio's default: 2).
	Retries int
}

// nginxConf is the configuration nginx runs with, its files under dir and its Lua
// module in modules.
func (c *Config) nginxConf(dir, modules string) (string, error) {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# The stand-in for an Envoy sidecar (trafficlab emulate/sidecar).")
	w("load_module %s/ndk_http_module.so;", modules)
	w("load_module %s/ngx_http_lua_module.so;", modules)
	w("daemon off;")
	w("master_process on;")
	w("worker_processes %d;", max(c.Workers, 1))
	w("worker_rlimit_nofile 200000;")
	w("pid %s/nginx.pid;", dir)
	w("error_log stderr warn;")
	w("events { worker_connections 65536; multi_accept on; }")
	w("http {")
	w("  access_log off;")
	for _, t := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		w("  %s_temp_path %s/%s;", t, dir, t)
	}
	w("  lua_shared_dict sidecar 1m;")
	half := c.PerRequestCPU.Seconds() / 2
	// os.clock is clock(3): this worker process's CPU time, in microseconds.
	w("  init_worker_by_lua_block { ngx.shared.sidecar:set('pid ' .. ngx.worker.id(), ngx.worker.pid()) }")
	spend := fmt.Sprintf("local t = os.clock() + %g; while os.clock() < t do end", half)
	if c.Inbound {
		w("  upstream app { server 127.0.0.1:%d; keepalive 1024; keepalive_requests 1000000000; keepalive_timeout 3600s; }", c.AppPort)
	} else {
		lb, err := balancer(c.LBPolicy)
		if err != nil {
			return "", err
		}
		w("  upstream app {")
		if lb != "" {
			w("    %s;", lb)
		}
		w("    zone app 256k;")
		for _, u := range c.Upstreams {
			// max_fails=0: nginx would otherwise take a pod out for 10 s after a
			// failure; Envoy's outlier detection is off without a DestinationRule.
			w("    server %s max_fails=0;", u)
		}
		w("    keepalive 1024; keepalive_requests 1000000000; keepalive_timeout 3600s;")
		w("  }")
	}
	port := OutboundPort
	if c.Inbound {
		port = InboundPort
	}
	w("  server {")
	w("    listen %d reuseport backlog=4096;", port)
	w("    keepalive_requests 1000000000; keepalive_timeout 3600s;")
	w("    location / {")
	if half > 0 {
		w("      access_by_lua_block { %s }", spend)
		w("      header_filter_by_lua_block { %s }", spend)
	}
	w("      log_by_lua_block {")
	w("        local d = ngx.shared.sidecar")
	w("        d:incr('requests', 1, 0)")
	w("        if ngx.status == 503 then d:incr('503', 1, 0) end")
	w("        local _, commas = string.gsub(ngx.var.upstream_addr or '', ',', '')")
	w("        if commas > 0 then d:incr('retries', commas, 0) end")
	w("      }")
	w("      proxy_pass http://app;")
	w("      proxy_http_version 1.1;")
	w("      proxy_set_header Connection \"\";")
	w("      proxy_set_header Host $http_host;")
	w("      proxy_read_timeout 3600s; proxy_send_timeout 3600s;")
	if c.Retries > 0 {
		w("      proxy_next_upstream error http_503; proxy_next_upstream_tries %d;", c.Retries+1)
	} else {
		w("      proxy_next_upstream off;")
	}
	w("      error_page 502 504 = @unavailable;")
	w("    }")
	w("    location @unavailable { return 503; }")
	w("  }")
	w("  server {")
	w("    listen unix:%s/admin.sock;", dir)
	w("    location = /stats { content_by_lua_block {")
	w("      local d = ngx.shared.sidecar")
	w("      for _, k in ipairs({'requests', 'retries', '503'}) do ngx.say(k, ' ', d:get(k) or 0) end")
	w("      for i = 0, %d do ngx.say('pid ', i, ' ', d:get('pid ' .. i) or 0) end", max(c.Workers, 1)-1)
	w("    } }")
	w("  }")
	w("}")
	return b.String(), nil
}

// balancer is the upstream directive for an Istio load balancer name, as
// model/sidecar reads the name.
func balancer(policy string) (string, error) {
	lb, err := modelsidecar.NewBalancer(policy, rand.New(rand.NewPCG(0, 0)))
	if err != nil {
		return "", err
	}
	switch lb.(type) {
	case modelsidecar.LeastRequest:
		return "random two least_conn", nil
	case modelsidecar.Random:
		return "random", nil
	}
	return "", nil // round robin, nginx's default
}

// rules are the interception rules of the pod's namespace, for iptables-restore
// --noflush: Istio's REDIRECTs, narrowed to the one Service port (outbound) or app
// port (inbound) the scenario has.
func (c *Config) rules() string {
	if c.Inbound {
		return fmt.Sprintf("*nat\n-A PREROUTING -p tcp --dport %d -j REDIRECT --to-ports %d\nCOMMIT\n", c.AppPort, InboundPort)
	}
	return fmt.Sprintf("*nat\n-A OUTPUT -p tcp -d %s/32 --dport %d -j REDIRECT --to-ports %d\nCOMMIT\n",
		c.Intercept.Addr(), c.Intercept.Port(), OutboundPort)
}
