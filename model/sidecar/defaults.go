package sidecar

import (
	"time"

	"trafficlab/sim"
)

// IstioProxyCPULimitMilli and IstioProxyCPURequestMilli are the istio-proxy container's
// default resources, global.proxy.resources in the istiod chart
// (manifests/charts/istio-control/istio-discovery/values.yaml: requests cpu 100m, limits
// cpu 2000m); the sidecar.istio.io/proxyCPU and proxyCPULimit annotations override them
// (files/injection-template.yaml).
const (
	IstioProxyCPULimitMilli   = 2000
	IstioProxyCPURequestMilli = 100
)

// SidecarCPUPerRequest is the worker CPU time one sidecar spends on one request passing
// through it, from Istio's published measurement: "In Istio 1.24, with 1000 http requests
// per second containing 1 KB of payload each - a single sidecar proxy with 2 worker threads
// consumes about 0.20 vCPU" (istio.io docs/ops/deployment/performance-and-scalability,
// "Sidecar and ztunnel resource usage"; HTTP/1.1, mutual TLS, default telemetry). 0.20 vCPU
// over 1000 requests/s is 200 µs per request. A request costs this in the client's sidecar
// and again in the server's. Older pages gave 0.5 vCPU (Istio 1.1–1.7) and 0.35 vCPU
// (Istio 1.13) per 1000 requests/s.
const SidecarCPUPerRequest = sim.Time(200 * time.Microsecond)

// Upstream pool facts (package comment, "Upstream pools").
const (
	// HTTP1StreamsPerConnection: an HTTP/1.1 upstream connection carries one request at a
	// time (no pipelining): "HTTP1 always has a concurrent-request-limit of 1 per connection"
	// (source/common/http/http1/conn_pool.cc, ConnPoolImpl::ActiveClient constructor).
	HTTP1StreamsPerConnection = 1
	// HTTP2MaxConcurrentStreams is Envoy's default Http2ProtocolOptions.max_concurrent_streams,
	// 2^31 − 1 (api/envoy/config/core/v3/protocol.proto); the peer's
	// SETTINGS_MAX_CONCURRENT_STREAMS lowers it per connection. Istio leaves it unset unless a
	// DestinationRule sets http.maxConcurrentStreams.
	HTTP2MaxConcurrentStreams = 2147483647
)

// Route timeouts: Envoy's RouteAction.timeout defaults to 15 s, retries included
// (api/envoy/config/route/v3/route_components.proto); istiod writes 0, which disables it,
// unless a VirtualService sets timeout (pilot/pkg/networking/core/route/route.go,
// setTimeout and Notimeout).
const (
	EnvoyRouteTimeout = sim.Time(15 * time.Second)
	IstioRouteTimeout = sim.Time(0)
)
