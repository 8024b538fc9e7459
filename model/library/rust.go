package library

import "time"

// rustReqwest is reqwest 0.13's async Client, on hyper-util's legacy pooled
// client, one Client (a cloned Arc) shared by the process. reqwest::get builds a
// Client per call and reuses nothing.
//
// Pool: no cap on connections or idle ones; an idle connection closes after 90 s;
// the server's Keep-Alive header is not read.
//
// Idle pick: LIFO (the idle list is a Vec, pushed and popped at its end).
//
// Timeout: none by default.
//
// Stale connection: an idle connection found closed is skipped. A request is
// resent only if hyper had not started writing it when the connection was found
// closed; one the server's close crosses on the wire fails, whatever the method
// (IncompleteMessage or a reset). reqwest's own retry layer resends only
// HTTP/2 GOAWAY and REFUSED_STREAM.
var rustReqwest = Profile{
	Name:                   "rust-reqwest",
	Summary:                "Rust reqwest Client (hyper-util legacy pool), one client shared by all tasks",
	Reuse:                  "shared",
	MaxPerHost:             0,
	MaxIdlePerHost:         0,
	IdleTimeout:            90 * time.Second,
	MaxLifetime:            0,
	Protocol:               "http1",
	Timeout:                0,
	IdlePick:               PickLIFO,
	ClosesOnTimeout:        true,
	RetriesStaleIdempotent: false,
	Sources: []string{
		"seanmonstar/reqwest@v0.13.4 src/async_impl/client.rs ClientBuilder::new pool_max_idle_per_host: usize::MAX, pool_idle_timeout: Some(Duration::from_secs(90)), timeout: None",
		"hyperium/hyper-util@v0.1.20 src/client/legacy/pool.rs IdlePopper::pop self.list.pop(), !entry.value.is_open()",
		"hyperium/hyper-util@v0.1.20 src/client/legacy/client.rs retry_canceled_requests: true, TrySendError::Retryable only for an unstarted request",
		"seanmonstar/reqwest@v0.13.4 src/retry.rs Classifier::ProtocolNacks: HTTP/2 GOAWAY NO_ERROR and REFUSED_STREAM only",
	},
	Resolution: &Resolution{Pick: AddressFirst, Sources: append([]string{
		"seanmonstar/reqwest@v0.12.28 src/async_impl/client.rs: GaiResolver::new() unless hickory-dns",
		"hyperium/hyper-util@v0.1.20 src/client/legacy/connect/dns.rs GaiResolver: to_socket_addrs on every connect; http.rs ConnectingTcp: for addr in addrs, next on error",
	}, getaddrinfoNames...)},
}
