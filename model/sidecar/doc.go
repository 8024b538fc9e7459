// Package sidecar holds the policies of an Envoy sidecar as Istio injects and configures it:
// per-request host selection, circuit breakers, retries and their backoff, the number of
// worker threads and the worker a downstream connection lands on. Each rule is a pure
// function or a small value the engine owns; the engine keeps the clock, the connections
// and the counts. Every rule cites the Envoy or Istio file and function it mirrors: Envoy's
// main branch with the load balancers under source/extensions/load_balancing_policies
// (plus source/common/router, source/common/conn_pool, source/common/upstream), and Istio
// master at 86c9f01f (August 2026, after 1.31.0-rc.0; pilot/pkg/networking/core,
// pilot/cmd/pilot-agent).
//
// # How the engine assembles a sidecar
//
// One Envoy runs Concurrency(...) worker threads. A downstream connection is accepted by
// one worker (AssignWorker) and stays there for its life (Envoy docs, "Threading model").
// Each worker has its own load balancer per upstream cluster (one Balancer value per
// worker: Envoy's ThreadLocalClusterManagerImpl creates one LB per thread) and its own
// connection pool per upstream host. Shared by all workers of one Envoy are the per-host
// active-request counts that LEAST_REQUEST reads (Host.Active: Envoy's host rq_active
// gauge lives on the host object, which the workers share) and the circuit breaker
// counts of the cluster (one Breaker per cluster per Envoy).
//
// # Upstream pools (source/common/conn_pool/conn_pool_base.cc, ConnPoolImplBase)
//
// A request attempt, once a host is picked, goes to this worker's pool for that host:
//
//   - A ready connection with spare stream capacity takes it at once. Ready connections
//     are kept most-recently-freed first (LinkedObject::moveBetweenLists splices to the
//     front) and the front one is used. Attaching checks Breaker Requests first: over
//     the limit the attempt fails with the overflow outcome (Overflow*).
//   - Otherwise the attempt becomes pending: Breaker PendingRequests must admit it, or it
//     fails at once with the overflow outcome. Then the pool opens a connection if the
//     connecting capacity is short of the pending attempts, and Breaker Connections
//     admits it; when it does not, the pool still opens one if it has no connection at
//     all (tryCreateNewConnection), so take it with Breaker.Acquire. Pending attempts are
//     served oldest first (onUpstreamReady pops the back of a push-front list).
//   - HTTP/1.1 carries HTTP1StreamsPerConnection request at a time: concurrent requests
//     to one host open more connections, up to max_connections, then wait as pending.
//   - HTTP/2 multiplexes up to min(HTTP2MaxConcurrentStreams, the peer's
//     SETTINGS_MAX_CONCURRENT_STREAMS) streams on one connection; in practice each worker
//     holds one connection per host, and opens another only when the first is full or
//     draining (GOAWAY, max_requests_per_connection).
//   - Host.Active counts attempts attached to a connection (rq_active), not pending ones:
//     counting pending ones is behind the runtime guard
//     envoy.reloadable_features.least_request_lb_count_pending_requests, off by default
//     (least_request_lb.cc, effectiveActiveRequests).
//
// Istio keeps a service port's protocol upstream: ports declared http2 or grpc get HTTP/2,
// plain http ports stay HTTP/1.1 (mesh h2UpgradePolicy defaults to DO_NOT_UPGRADE), and
// unnamed ports use the downstream connection's protocol (cluster_builder.go,
// setUpstreamProtocol; cluster_traffic_policy.go, shouldH2Upgrade).
//
// # A request's life
//
// Pick a host (Balancer.Pick; on a retry, PickAvoiding). Run the attempt through the pool
// above. When it ends without a usable response, RetryPolicy.Decide says whether to retry;
// on RetryYes wait Backoff(...) and go back to picking. Istio sets no route timeout
// (IstioRouteTimeout), so nothing but the client and per-try timeouts bounds a request.
package sidecar
