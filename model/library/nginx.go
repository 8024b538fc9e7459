package library

import "time"

// nginxProxy is nginx 1.30 as a reverse proxy with proxy_pass straight to the
// Service's name, the usual way to point it at a Kubernetes Service: an implicit
// upstream, which gets no connection cache, so a new connection per request
// (HTTP/1.1 since 1.29.7, HTTP/1.0 before).
//
// Timeout: proxy_read_timeout 60 s (between two reads; taken here as the
// request's).
var nginxProxy = Profile{
	Name:            "nginx",
	Summary:         "nginx 1.30 proxy_pass to a Service name: a new upstream connection per request",
	Reuse:           "none",
	Protocol:        "http1",
	Timeout:         60 * time.Second,
	ClosesOnTimeout: true,
	Sources: []string{
		"nginx/nginx@release-1.30.4 src/http/modules/ngx_http_upstream_keepalive_module.c ngx_http_upstream_keepalive_init_main_conf: skip implicit upstreams (srv_conf == NULL)",
		"nginx/nginx@release-1.30.4 src/http/modules/ngx_http_proxy_module.c merge: http_version NGX_HTTP_VERSION_11, read_timeout 60000",
		"nginx/nginx@release-1.28.0 src/http/modules/ngx_http_proxy_module.c merge: NGX_HTTP_VERSION_10, Connection: close",
	},
	// proxy_pass resolves its name when the configuration loads; each address
	// becomes a peer, and requests, each on a new connection, go round robin.
	Resolution: &Resolution{Cache: CacheForever, Pick: AddressRotate, Sources: []string{
		"nginx/nginx@release-1.29.8 src/http/ngx_http_upstream_round_robin.c ngx_http_upstream_init_round_robin: an upstream implicitly defined by proxy_pass, ngx_inet_resolve_host",
		"nginx/nginx@release-1.29.8 src/http/ngx_http_upstream_round_robin.c ngx_http_upstream_get_peer: smooth weighted round robin",
		"nginx/nginx@release-1.29.8 src/http/modules/ngx_http_proxy_module.c proxy_next_upstream default error|timeout: a refused peer, the next",
	}},
}

// nginxUpstreamKeepalive is nginx 1.30 proxying to an explicit upstream {} block,
// which since 1.29.7 keeps connections alive by default (keepalive 32; before, it
// needed keepalive N, proxy_http_version 1.1 and an empty Connection header).
//
// Pool: one cache per worker process (the profile models one worker): no cap on
// open connections, at most 32 idle, the least recently cached closed when full;
// an idle connection closes after 60 s (keepalive_timeout) and one older than an
// hour is not cached again (keepalive_time). Not modelled: the close after 1000
// requests on one connection (keepalive_requests).
//
// Idle pick: LIFO, after the balancer picks the server (a Service's ClusterIP is
// one server).
//
// Stale connection: a failure on a cached connection does not use up a try, so
// even a one-server upstream sends the request again, on the next connection,
// unless it is a POST, LOCK or PATCH that was already sent (502).
var nginxUpstreamKeepalive = Profile{
	Name:                   "nginx-upstream-keepalive",
	Summary:                "nginx 1.30 proxy_pass to an upstream {} block: keepalive 32 idle per worker",
	Reuse:                  "shared",
	MaxPerHost:             0,
	MaxIdlePerHost:         32,
	IdleTimeout:            60 * time.Second,
	MaxLifetime:            time.Hour,
	Protocol:               "http1",
	Timeout:                60 * time.Second,
	IdlePick:               PickLIFO,
	ClosesOnTimeout:        true,
	RetriesStaleIdempotent: true,
	Sources: []string{
		"nginx/nginx@release-1.30.4 src/http/modules/ngx_http_upstream_keepalive_module.c init_main_conf: max_cached = 32, timeout 60000, time 3600000, requests 1000; free_keepalive_peer ngx_queue_insert_head, get_keepalive_peer",
		"nginx/nginx@release-1.30.4 docs/xml/nginx/changes.xml 1.29.7: keepalive in the upstream block enabled by default; proxy_http_version 1.1",
		"nginx/nginx@release-1.30.4 src/http/ngx_http_upstream.c ngx_http_upstream_next: u->peer.cached && FT_ERROR tries++, NGX_HTTP_UPSTREAM_FT_NON_IDEMPOTENT for POST LOCK PATCH",
	},
}
