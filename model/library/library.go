// Package library holds the connection behaviour of real HTTP clients and load
// generators, as their own source code defines it. A scenario names a library
// (`library: go-net-http`) and gets that library's pooling defaults; the engine
// reads the rest of a Profile (which idle connection is reused, what a timeout or
// a stale keep-alive connection does) to behave as the library would.
//
// Every value cites the public source it was read from, as "owner/repo[@ref] path
// identifier". Where a default changed between versions, the profile follows the
// current release and its comment gives the older value.
//
// One behaviour is common to every pooling library here, so it is not a field:
// before reusing an idle connection each one notices a close the server sent
// while the connection sat idle (Go's readLoop marks it broken, .NET polls it in
// PrepareForReuse, urllib3 checks is_connection_dropped, Java's CleanupTrigger
// evicts it) and opens a new one instead. RetriesStaleIdempotent is about the
// remaining race: the server's close crossing the request on the wire.
package library

import (
	"slices"
	"time"
)

// Idle connection pick orders.
const (
	PickLIFO = "lifo" // the most recently returned idle connection is reused first
	PickFIFO = "fifo" // the longest-idle connection is reused first
)

// Profile is how one client library opens, pools, reuses and closes connections
// with its default settings.
type Profile struct {
	Name, Summary string
	// Reuse: none (a new connection per request), per-thread (one pool per caller
	// thread), shared (one pool for all threads of a client process).
	Reuse string
	// MaxPerHost caps the connections of one pool (busy, idle and dialing);
	// MaxIdlePerHost caps the idle ones kept, extra ones close when returned.
	// 0 = unlimited. Unused when Reuse is none.
	MaxPerHost, MaxIdlePerHost int
	// IdleTimeout closes a connection idle this long; MaxLifetime retires one
	// this old. 0 = never.
	IdleTimeout, MaxLifetime time.Duration
	// Protocol on a plain http:// target: http1 | http2.
	Protocol string
	// Timeout is the library's own default request timeout. 0 = none.
	Timeout time.Duration
	// IdlePick is which idle connection a request takes: PickLIFO or PickFIFO;
	// "" when there is no choice (no pooling, or one connection per pool).
	IdlePick string
	// ClosesOnTimeout: a connection whose request timed out is closed, not
	// returned to the pool, so the next request dials (and kube-proxy picks) anew.
	// Every profile does, and the simulator relies on it (simulate's
	// TestEveryLibraryClosesOnTimeout).
	ClosesOnTimeout bool
	// RetriesStaleIdempotent: a GET that fails on a reused connection because the
	// server closed it, before any response byte arrived, is sent again on
	// another connection without the caller seeing an error. Conditions and
	// limits differ per library; see each profile.
	RetriesStaleIdempotent bool
	// AbortsRun: the tool ends the whole run at the first receive error (such as
	// a connection reset), as ab does without -r.
	AbortsRun bool
	// Sources cite where each value was read: "owner/repo[@ref] path identifier".
	Sources []string
	// RequestCPU is the CPU the client process (library and kernel) spends per
	// request on a connection it already has; ConnectionCPU is what opening and
	// closing one more connection adds. 0 where no figure exists: not modelled.
	RequestCPU, ConnectionCPU time.Duration
	// SteadyMilliCPU is the CPU, in millicores, the process burns while it runs,
	// whatever it sends (a load generator's pacer and timers); 0 for none.
	SteadyMilliCPU int64
	// CPUSources say where each CPU figure was measured or published.
	CPUSources []string
}

// dotnetHTTPClient is .NET 6+ HttpClient on SocketsHttpHandler, one instance
// shared by all threads (R1).
//
// Idle pick: LIFO. .NET 6 takes the last element of _availableHttp11Connections
// and appends returned ones; the current pool (HttpConnectionPool.Http1.cs) is a
// ConcurrentStack, _http11Connections, kept in LIFO order when scavenged. A
// request that finds no idle connection is queued and a connection is dialed
// for it; a connection returned meanwhile goes to the oldest queued request
// first (FIFO), and the dialed one then joins the pool. Nothing caps idle
// connections: every returned one is kept until PooledConnectionIdleTimeout.
//
// Timeout: HttpClient.Timeout (100 s) cancels the request, and cancellation
// disposes of the connection (HttpConnection.RegisterCancellation).
//
// Stale connection: if the first read of the response hits EOF and no request
// body was sent, the request is marked RetryOnConnectionFailure and retried by
// HttpConnectionPool, at most MaxConnectionFailureRetries = 3 times, for any
// method without a body. A reset (ECONNRESET) instead of EOF is not retried.
var dotnetHTTPClient = Profile{
	Name:                   "dotnet-httpclient",
	Summary:                ".NET 6+ HttpClient (SocketsHttpHandler), one instance shared by all threads",
	Reuse:                  "shared",
	MaxPerHost:             0,
	MaxIdlePerHost:         0,
	IdleTimeout:            time.Minute,
	MaxLifetime:            0,
	Protocol:               "http1",
	Timeout:                100 * time.Second,
	IdlePick:               PickLIFO,
	ClosesOnTimeout:        true,
	RetriesStaleIdempotent: true,
	Sources: []string{
		"dotnet/runtime src/libraries/Common/src/System/Net/Http/HttpHandlerDefaults.cs DefaultMaxConnectionsPerServer = int.MaxValue",
		"dotnet/runtime src/libraries/Common/src/System/Net/Http/HttpHandlerDefaults.cs DefaultPooledConnectionIdleTimeout = TimeSpan.FromMinutes(1)",
		"dotnet/runtime pull/52687 'Reduce DefaultPooledConnectionIdleTimeout default': 120 s to 60 s, .NET 6 (2 min in .NET Core and .NET 5)",
		"dotnet/runtime src/libraries/Common/src/System/Net/Http/HttpHandlerDefaults.cs DefaultPooledConnectionLifetime = Timeout.InfiniteTimeSpan",
		"dotnet/runtime src/libraries/System.Net.Http/src/System/Net/Http/HttpUtilities.cs DefaultRequestVersion = HttpVersion.Version11",
		"dotnet/runtime src/libraries/System.Net.Http/src/System/Net/Http/HttpClient.cs s_defaultTimeout = TimeSpan.FromSeconds(100)",
		"dotnet/runtime (.NET 6) src/libraries/System.Net.Http/src/System/Net/Http/SocketsHttpHandler/HttpConnectionPool.cs _availableHttp11Connections[count - 1], ReturnHttp11Connection, MaxConnectionFailureRetries = 3, SendWithRetryAsync",
		"dotnet/runtime src/libraries/System.Net.Http/src/System/Net/Http/SocketsHttpHandler/ConnectionPool/HttpConnectionPool.Http1.cs ConcurrentStack _http11Connections, ReturnHttp11Connection (FIFO to waiters)",
		"dotnet/runtime src/libraries/System.Net.Http/src/System/Net/Http/SocketsHttpHandler/HttpConnection.cs SendAsync _canRetry on premature EOF, MapSendException, RegisterCancellation",
	},
	RequestCPU: 35600 * time.Nanosecond,
	CPUSources: []string{
		"gvanrossum/http-get-perf README.md: net-http-client, one static HttpClient in 64 loops, 28,099 requests/s on a 1-core client (.NET Core 3.1): at most 35.6 µs a request, the kernel's share included",
		"no public CPU figure for a new connection, nor for one sequential caller; .NET cannot be run on this project's machine to measure one",
	},
}

// goNetHTTP is Go's http.DefaultClient / DefaultTransport, one Transport shared
// by all goroutines.
//
// Idle pick: LIFO (queueForIdleConn takes list[len(list)-1], "most recently-used
// idle connection"). With more than 2 requests in flight to one host, the extra
// connections close when returned (tryPutIdleConn: errTooManyIdleHost), so the
// next burst dials again and kube-proxy picks pods anew. A request that finds no
// idle connection starts a dial and also waits for one to come back; whichever
// comes first serves it (a returned connection goes to the oldest waiter), and a
// dial that lost the race joins the idle pool (dialConnFor).
//
// Timeout: none by default (Client.Timeout zero). When a context or
// Client.Timeout ends a request, persistConn.cancelRequest closes the connection.
//
// Stale connection: shouldRetryRequest resends on a new connection when the
// failed connection was reused and nothing was written, or the method is
// replayable (GET, HEAD, OPTIONS, TRACE, or an Idempotency-Key header) and the
// read failed before the first response byte (errServerClosedIdle on EOF, or
// transportReadFromServerError such as a reset). There is no retry count: it
// goes on while it keeps drawing reused connections; a fresh one is not retried.
var goNetHTTP = Profile{
	Name:                   "go-net-http",
	Summary:                "Go net/http DefaultTransport, shared by all goroutines",
	Reuse:                  "shared",
	MaxPerHost:             0,
	MaxIdlePerHost:         2,
	IdleTimeout:            90 * time.Second,
	MaxLifetime:            0,
	Protocol:               "http1",
	Timeout:                0,
	IdlePick:               PickLIFO,
	ClosesOnTimeout:        true,
	RetriesStaleIdempotent: true,
	Sources: []string{
		"golang/go@go1.26.8 src/net/http/transport.go DefaultMaxIdleConnsPerHost = 2",
		"golang/go@go1.26.8 src/net/http/transport.go Transport.MaxConnsPerHost: zero means no limit",
		"golang/go@go1.26.8 src/net/http/transport.go DefaultTransport IdleConnTimeout: 90 * time.Second",
		"golang/go@go1.26.8 src/net/http/transport.go Transport doc: HTTP/1.1 for HTTP URLs",
		"golang/go@go1.26.8 src/net/http/transport.go queueForIdleConn list[len(list)-1], tryPutIdleConn errTooManyIdleHost, dialConnFor",
		"golang/go@go1.26.8 src/net/http/transport.go persistConn.cancelRequest closeLocked",
		"golang/go@go1.26.8 src/net/http/transport.go persistConn.shouldRetryRequest; src/net/http/request.go Request.isReplayable",
		"golang/go@go1.26.8 src/net/http/client.go Client.Timeout: zero means no timeout",
	},
	RequestCPU:    36 * time.Microsecond,
	ConnectionCPU: 66900 * time.Nanosecond,
	CPUSources: []string{
		"cmd/cpucost on one core of an AMD EPYC (Linux 6.18, Go 1.26), against a local Go server: 36.0 µs a request on a kept connection, 103 µs with DisableKeepAlives, so 66.9 µs a new connection",
	},
}

// pythonRequests is one requests.Session per thread. Sessions are not documented
// as thread-safe and the maintainers' advice is one per thread (psf/requests
// issue 2766). The module functions (requests.get) open and close a Session per
// call, so a loop of requests.get reuses nothing: model that with reuse: none.
//
// Pool: HTTPAdapter pool_maxsize 10 with pool_block False. An empty pool makes a
// new connection instead of waiting, and urllib3's _put_conn closes a returned
// connection when 10 are already idle, so only the idle count is capped. With one
// thread per Session, a pool rarely holds more than one connection.
//
// Idle pick: LIFO (urllib3 HTTPConnectionPool.QueueCls = queue.LifoQueue). No
// idle timeout on the client side.
//
// Timeout: none unless the caller passes timeout=. On any error, a timeout
// included, urlopen closes the connection (clean_exit False) and puts an empty
// slot back.
//
// Stale connection: not retried. HTTPAdapter's default is Retry(0, read=False),
// so the caller gets a ConnectionError.
var pythonRequests = Profile{
	Name:                   "python-requests",
	Summary:                "Python requests.Session (urllib3), one Session per thread",
	Reuse:                  "per-thread",
	MaxPerHost:             0,
	MaxIdlePerHost:         10,
	IdleTimeout:            0,
	MaxLifetime:            0,
	Protocol:               "http1",
	Timeout:                0,
	IdlePick:               PickLIFO,
	ClosesOnTimeout:        true,
	RetriesStaleIdempotent: false,
	Sources: []string{
		"psf/requests@v2.34.2 src/requests/adapters.py DEFAULT_POOLSIZE = 10, DEFAULT_POOLBLOCK = False, DEFAULT_RETRIES = 0 -> Retry(0, read=False)",
		"psf/requests issue/2766 'Document threading contract for Session class': one Session per thread",
		"psf/requests@v2.34.2 src/requests/api.py request: with sessions.Session() as session",
		"psf/requests@v2.34.2 docs/user/quickstart.rst Timeouts: requests do not time out unless a timeout is set",
		"urllib3/urllib3@2.7.0 src/urllib3/connectionpool.py QueueCls = queue.LifoQueue, _get_conn is_connection_dropped, _put_conn 'Connection pool is full, discarding connection', urlopen clean_exit",
		"urllib3/urllib3@2.7.0 src/urllib3/util/retry.py Retry.increment, is_exhausted",
	},
	RequestCPU:    401 * time.Microsecond,
	ConnectionCPU: 81400 * time.Nanosecond,
	CPUSources: []string{
		"cmd/cpucost on one core of an AMD EPYC (Linux 6.18, Go 1.26), against a local Go server: requests 2.34 / urllib3 2.7 on CPython 3.11: 401 µs a request on a reused Session, 482 µs with Connection: close, so 81.4 µs a new connection (requests.get, a new Session as well: 544 µs)",
	},
}

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
}

// javaHTTPClient is java.net.http.HttpClient (JDK 20+), one client shared by all
// threads.
//
// Idle pick: FIFO, unlike the other pools here: ConnectionPool.putConnection
// appends to the per-host list and findConnection takes removeFirst. The pool
// bounds only idle connections: jdk.httpclient.connectionPoolSize (default 0,
// unbounded) counts them across all hosts and closes the oldest beyond it.
//
// Idle timeout: jdk.httpclient.keepalive.timeout, 30 s since JDK 20
// (JDK-8297030); 1200 s in JDK 11 to 19.
//
// Protocol: the client prefers HTTP/2, but on plain http:// it sends HTTP/1.1
// with "Upgrade: h2c" and switches only if the server answers 101; most servers
// (Kestrel, Go net/http, nginx) do not, so the connection stays HTTP/1.1.
//
// Timeout: none unless HttpRequest.Builder.timeout is set. Cancelling the
// exchange closes the HTTP/1.1 connection (Http1Exchange.cancelImpl).
//
// Stale connection: Http1AsyncReceiver reports an error on an HTTP/1.1 connection
// before any response byte as ConnectionExpiredException; MultiExchange retries it
// for GET and HEAD (any method with jdk.httpclient.enableAllMethodRetry), up to
// jdk.httpclient.redirects.retrylimit attempts (default 5).
var javaHTTPClient = Profile{
	Name:                   "java-httpclient",
	Summary:                "java.net.http.HttpClient (JDK 20+), one client shared by all threads",
	Reuse:                  "shared",
	MaxPerHost:             0,
	MaxIdlePerHost:         0,
	IdleTimeout:            30 * time.Second,
	MaxLifetime:            0,
	Protocol:               "http1",
	Timeout:                0,
	IdlePick:               PickFIFO,
	ClosesOnTimeout:        true,
	RetriesStaleIdempotent: true,
	Sources: []string{
		"openjdk/jdk src/java.net.http/share/classes/jdk/internal/net/http/ConnectionPool.java MAX_POOL_SIZE jdk.httpclient.connectionPoolSize 0 (unbounded), putConnection l.add, findConnection l.removeFirst",
		"openjdk/jdk src/java.net.http/share/classes/jdk/internal/net/http/HttpClientImpl.java DEFAULT_KEEP_ALIVE_TIMEOUT = 30, jdk.httpclient.keepalive.timeout",
		"openjdk CSR JDK-8297558 for JDK-8297030 (JDK 20): keepalive.timeout default 1200 s to 30 s",
		"openjdk/jdk src/java.net.http/share/classes/java/net/http/HttpClient.java Builder.version: newly built clients prefer HTTP/2; each request attempts to upgrade",
		"openjdk/jdk src/java.net.http/share/classes/jdk/internal/net/http/Http2ClientImpl.java getConnectionFor: !secure, no pooled connection, attempt upgrade",
		"openjdk/jdk src/java.net.http/share/classes/java/net/http/HttpRequest.java Builder.timeout: not setting a timeout blocks forever",
		"openjdk/jdk src/java.net.http/share/classes/jdk/internal/net/http/Http1Exchange.java cancelImpl connection.close",
		"openjdk/jdk src/java.net.http/share/classes/jdk/internal/net/http/Http1AsyncReceiver.java received.get() == 0 -> ConnectionExpiredException",
		"openjdk/jdk src/java.net.http/share/classes/jdk/internal/net/http/MultiExchange.java checkRetryEligible ConnectionExpiredException, isIdempotentRequest GET HEAD, DEFAULT_MAX_ATTEMPTS = 5",
	},
	RequestCPU:    82600 * time.Nanosecond,
	ConnectionCPU: 139 * time.Microsecond,
	CPUSources: []string{
		"cmd/cpucost on one core of an AMD EPYC (Linux 6.18, Go 1.26), against a local Go server: JDK 17 java.net.http.HttpClient after warm-up: 82.6 µs a request on a shared client, 222 µs with Connection: close, so 139 µs a new connection (a new HttpClient per request: 3.0 ms)",
	},
}

// profiles is every known library.
var profiles = []Profile{
	dotnetHTTPClient, goNetHTTP, pythonRequests, curlLoop, ab, abKeepalive,
	vegeta, fortio, javaHTTPClient,
}

// Lookup returns the profile called name.
func Lookup(name string) (Profile, bool) {
	i := slices.IndexFunc(profiles, func(p Profile) bool { return p.Name == name })
	if i < 0 {
		return Profile{}, false
	}
	p := profiles[i]
	p.Sources = slices.Clone(p.Sources) // the table stays as cited, whatever callers do
	p.CPUSources = slices.Clone(p.CPUSources)
	return p, true
}

// Names returns every profile name, sorted.
func Names() []string {
	names := make([]string, len(profiles))
	for i, p := range profiles {
		names[i] = p.Name
	}
	slices.Sort(names)
	return names
}
