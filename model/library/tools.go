package library

import "time"

// curlLoop is curl run once per request from a shell loop: every request is a new
// process, so a new TCP connection and a new kube-proxy pick (R1's ~74 rps
// spread evenly over 5 pods). curl's connection cache lives inside one
// invocation. Plain http:// stays HTTP/1.1 unless --http2 asks for an Upgrade.
// No timeout (--max-time) and no retries (--retry) by default; a failed curl
// leaves the loop running.
var curlLoop = Profile{
	Name:            "curl-loop",
	Summary:         "curl in a shell loop: a new process, and connection, per request",
	Reuse:           "none",
	Protocol:        "http1",
	Timeout:         0,
	ClosesOnTimeout: true,
	Sources: []string{
		"curl/curl@curl-8_21_0 docs/MANUAL.md Persistent Connections: curl cannot use persistent connections for transfers that are used in subsequent curl invokes",
		"curl/curl@curl-8_21_0 docs/cmdline-opts/http2.md: for HTTP, --http2 attempts an Upgrade",
		"curl/curl@curl-8_21_0 docs/libcurl/opts/CURLOPT_TIMEOUT.md DEFAULT 0: never times out",
		"curl/curl@curl-8_21_0 docs/cmdline-opts/retry.md: 0 retries is the default",
	},
	RequestCPU: 5 * time.Millisecond,
	CPUSources: []string{
		"cmd/cpucost on one core of an AMD EPYC (Linux 6.18, Go 1.26), against a local Go server: curl 7.88 run by bash once per request: 5.0 ms a request, its process start, connection and close included (so no separate connection cost)",
	},
	// A new process per request: its 60 s host cache never serves a second one.
	Resolution: &Resolution{Pick: AddressFirst, Sources: append([]string{
		"curl/curl@curl-8_21_0 lib/url.c dns_cache_timeout_ms = 60000, kept in the process's multi handle",
		"curl/curl@curl-8_10_1 lib/connect.c addr_first_match; baller_start_next: the next address after a failure",
	}, getaddrinfoNames...)},
}

// ab is ApacheBench (httpd 2.4 support/ab.c) without -k: a new connection per
// request. -c (default 1) is the number of requests in flight, each on its own
// connection, all driven by one thread over a pollset; only the first connection
// starts until the first response header arrives. Requests are HTTP/1.0.
//
// Errors end the run (R2's aborted runs): a receive error such as a reset exits
// with "apr_socket_recv: Connection reset by peer" unless -r; a connect failure
// once more than 10 failures were counted exits with "Test aborted after 10
// failures"; 30 s (-s) without any socket activity exits too.
var ab = Profile{
	Name:            "ab",
	Summary:         "ApacheBench without -k: a new HTTP/1.0 connection per request, -c in flight",
	Reuse:           "none",
	Protocol:        "http1",
	Timeout:         30 * time.Second,
	ClosesOnTimeout: true,
	AbortsRun:       true,
	Sources: []string{
		"apache/httpd@2.4.62 support/ab.c write_request \"%s %s HTTP/1.0\", keepalive = 0, concurrency = 1",
		"apache/httpd@2.4.62 support/ab.c aprtimeout = apr_time_from_sec(30), apr_pollset_poll then apr_err",
		"apache/httpd@2.4.62 support/ab.c read_connection apr_err(\"apr_socket_recv\") unless recverrok (-r)",
		"apache/httpd@2.4.62 support/ab.c start_connect \"Test aborted after 10 failures\"",
	},
	RequestCPU:    7960 * time.Nanosecond,
	ConnectionCPU: 29200 * time.Nanosecond,
	CPUSources: []string{
		"cmd/cpucost on one core of an AMD EPYC (Linux 6.18, Go 1.26), against a local Go server: ab 2.3 -c 10: 7.96 µs a request with -k, 37.2 µs without, so 29.2 µs a new connection",
	},
	// It resolves once, and every connection goes to the first address that
	// connected: one pod for the run.
	Resolution: &Resolution{Cache: CacheForever, Pick: AddressFirst, OneAddress: true, Sources: []string{
		"apache/httpd@2.4.62 support/ab.c test: apr_sockaddr_info_get(&destsa, connecthost, ...) once per run",
		"apache/httpd@2.4.62 support/ab.c start_connect: apr_socket_connect(c->aprsock, destsa); destsa->next only while good == 0",
	}},
}

// abKeepalive is `ab -k`: each of the -c slots keeps one connection and sends its
// next request on it, so -c connections are pinned for the whole run. A slot
// keeps its connection only if the response header contains "Keep-Alive"
// (case-insensitive search, so "Connection: keep-alive" counts), else it closes
// and reconnects.
//
// Stale connection: not retried. If the server closed the kept connection, the
// EOF is counted as a failed request (a "Length" failure) and the slot
// reconnects for the next one; a reset aborts the run as in plain ab.
var abKeepalive = Profile{
	Name:            "ab-keepalive",
	Summary:         "ApacheBench -k: one keep-alive connection per concurrent slot",
	Reuse:           "per-thread",
	MaxPerHost:      1,
	MaxIdlePerHost:  1,
	Protocol:        "http1",
	Timeout:         30 * time.Second,
	ClosesOnTimeout: true,
	AbortsRun:       true,
	Sources: []string{
		"apache/httpd@2.4.62 support/ab.c case 'k': keepalive = 1; \"Connection: Keep-Alive\" request header",
		"apache/httpd@2.4.62 support/ab.c read_connection xstrcasestr(c->cbuff, \"Keep-Alive\"), c->keepalive = 0 then write_request on the same socket",
		"apache/httpd@2.4.62 support/ab.c close_connection err_length on an empty response, then start_connect",
	},
	RequestCPU:    7960 * time.Nanosecond,
	ConnectionCPU: 29200 * time.Nanosecond,
	CPUSources: []string{
		"cmd/cpucost on one core of an AMD EPYC (Linux 6.18, Go 1.26), against a local Go server: ab 2.3 -k -c 10: 7.96 µs a request; a new connection 29.2 µs (ab without -k)",
	},
	// It resolves once, and every connection goes to the first address that
	// connected: one pod for the run.
	Resolution: &Resolution{Cache: CacheForever, Pick: AddressFirst, OneAddress: true, Sources: []string{
		"apache/httpd@2.4.62 support/ab.c test: apr_sockaddr_info_get(&destsa, connecthost, ...) once per run",
		"apache/httpd@2.4.62 support/ab.c start_connect: apr_socket_connect(c->aprsock, destsa); destsa->next only while good == 0",
	}},
}

// vegeta is tsenart/vegeta's attacker: one Go http.Transport shared by its
// workers (10 to start, more as needed), so the Go rules apply (LIFO pick,
// connection closed on timeout, stale GETs retried), with its own limits:
// 10,000 idle per host, no cap on connections, and no IdleConnTimeout set, so
// idle connections never expire.
//
// Protocol: HTTP/2 is on (-http2 true) but only over TLS, through ALPN
// (http2.ConfigureTransport); a plain http:// target is HTTP/1.1. h2c needs -h2c.
var vegeta = Profile{
	Name:                   "vegeta",
	Summary:                "vegeta attack: one shared Go Transport, 10000 idle per host",
	Reuse:                  "shared",
	MaxPerHost:             0,
	MaxIdlePerHost:         10000,
	IdleTimeout:            0,
	MaxLifetime:            0,
	Protocol:               "http1",
	Timeout:                30 * time.Second,
	IdlePick:               PickLIFO,
	ClosesOnTimeout:        true,
	RetriesStaleIdempotent: true,
	Sources: []string{
		"tsenart/vegeta@v12.13.0 lib/attack.go DefaultConnections = 10000 (MaxIdleConnsPerHost), DefaultMaxConnections = 0 (MaxConnsPerHost)",
		"tsenart/vegeta@v12.13.0 lib/attack.go NewAttacker: http.Transport without IdleConnTimeout",
		"tsenart/vegeta@v12.13.0 lib/attack.go DefaultTimeout = 30 * time.Second, DefaultWorkers = 10",
		"tsenart/vegeta@v12.13.0 lib/attack.go HTTP2: http2.ConfigureTransport; H2C: http2.Transport{AllowHTTP: true}",
		"tsenart/vegeta@v12.13.0 attack.go flags -http2 true, -h2c false, -keepalive true",
	},
	RequestCPU:     31300 * time.Nanosecond,
	ConnectionCPU:  66900 * time.Nanosecond,
	SteadyMilliCPU: 68,
	CPUSources: []string{
		"cmd/cpucost on one core of an AMD EPYC (Linux 6.18, Go 1.26), against a local Go server: vegeta v12.13.0 attacking with keep-alive spent 65.3, 45.9 and 39.8 µs a request sent at 2,000, 4,000 and 8,000 requests/s; a steady 68 millicores (its pacer, timers and runtime) and 31.3 µs a request fit 2,000 and 8,000, and give 48.3 µs at 4,000, inside that step's spread (40.7–55.7)",
		"a new connection: Go net/http's 66.9 µs (vegeta dials with it); with a 10 ms timeout that every request hit, each then on a new connection, vegeta spent 87.7 µs a request on one core, 111 µs on two",
	},
	// Its dialer caches answers for the run (-dns-ttl 0s: forever) and dials a
	// random cached address, only that one: pods added later get no connection.
	Resolution: &Resolution{Cache: CacheForever, Pick: AddressRandom, OneAddress: true, Sources: []string{
		"tsenart/vegeta@v12.13.0 attack.go -dns-ttl: Cache DNS lookups for the given duration [-1 = disabled, 0 = forever] (default 0s)",
		"tsenart/vegeta@v12.13.0 lib/attack.go DNSCaching: rng.Shuffle(len(ips), ...); ips = firstOfEachIPFamily(ips)",
	}},
}

// fortio is fortio load with its default fast HTTP/1.1 client: each of the -c
// threads (default 4) has its own client and one socket, kept alive across its
// requests.
//
// It keeps the socket only after a 2xx (or 418) response; any other status, or
// any error, closes it and the next request reconnects (codeIsOK). The default
// request timeout is 3 s, enforced with a socket deadline; a timeout closes the
// socket.
//
// Stale connection: when the reused socket fails on write, or errors before the
// first response byte, the request is sent once more on a new socket, whatever
// the method.
var fortio = Profile{
	Name:                   "fortio",
	Summary:                "fortio load: -c threads, each with its own keep-alive connection",
	Reuse:                  "per-thread",
	MaxPerHost:             1,
	MaxIdlePerHost:         1,
	IdleTimeout:            0,
	MaxLifetime:            0,
	Protocol:               "http1",
	Timeout:                3 * time.Second,
	ClosesOnTimeout:        true,
	RetriesStaleIdempotent: true,
	Sources: []string{
		"fortio/fortio@v1.75.2 fhttp/httprunner.go RunHTTPTest: NewClient per thread",
		"fortio/fortio@v1.75.2 periodic/periodic.go DefaultRunnerOptions NumThreads: 4",
		"fortio/fortio@v1.75.2 bincommon/commonflags.go -keepalive true, -stdclient false, -h2 false",
		"fortio/fortio@v1.75.2 fhttp/http_client.go HTTPReqTimeOutDefaultValue = 3 * time.Second",
		"fortio/fortio@v1.75.2 fhttp/http_client.go FastClient.StreamFetch 'recurse once', readResponse RetryOnce, codeIsOK",
	},
	CPUSources: []string{"no public figure for fortio's CPU over HTTP, and cmd/cpucost does not run fortio: not modelled"},
	// -dns-method cached-rr: the first answer, kept for the run, a new
	// connection taking the next address in turn; a refusal is an error.
	Resolution: &Resolution{Cache: CacheForever, Pick: AddressRotate, OneAddress: true, Sources: []string{
		"fortio/fortio@v1.75.2 fnet/network.go FlagResolveMethod = dflag.New(\"cached-rr\", ...); dnsRoundRobin over dnsAddrs, never cleared",
		"fortio/fortio@v1.75.2 fhttp/http_client.go connect: resolve when making new connections; Unable to connect, no other address",
	}},
}
