package library

import "time"

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
	// It connects to getByName's one address, the first, and tries no other.
	Resolution: &Resolution{Cache: jvmNames.Cache, Pick: AddressFirst, OneAddress: true, Sources: append([]string{
		"openjdk/jdk@jdk-25.0.3 src/java.net.http/share/classes/jdk/internal/net/http/HttpRequestImpl.java getAddress: new InetSocketAddress(host, port)",
		"openjdk/jdk@jdk-25.0.3 src/java.base/share/classes/java/net/InetAddress.java getByName: return InetAddress.getAllByName(host)[0]",
		"openjdk/jdk@jdk-25.0.3 src/java.net.http/share/classes/jdk/internal/net/http/PlainHttpConnection.java connectAsync: chan.connect(Utils.resolveAddress(address))",
	}, jvmNames.Sources...)},
}

// okHTTP is OkHttp 4.12 (and 5.x) with one OkHttpClient shared by the process,
// its calls made synchronously from the caller's threads (execute()).
//
// Pool: no cap on connections for synchronous calls (the Dispatcher's 5 per host
// bound only enqueue()d async calls); at most 5 idle, across the whole pool, and a
// connection idle 5 minutes is evicted; the server's Keep-Alive header is not read.
//
// Idle pick: the first healthy idle connection in the order they were added
// (RealConnectionPool scans a ConcurrentLinkedQueue).
//
// Idle check: a GET never probes a pooled connection for the server's FIN; other
// methods do once it has been idle 10 s, which the profile does not tell apart.
//
// Timeout: read timeout 10 s (per read; taken here as the request's), no call
// timeout. Any IOException on an HTTP/1 connection stops its reuse.
//
// Stale connection: retried on another connection, whatever the method, unless
// the body is one-shot (retryOnConnectionFailure defaults to true), as long as the
// failures come on pooled connections.
var okHTTP = Profile{
	Name:                   "okhttp",
	Summary:                "OkHttp 4 OkHttpClient, one client shared by all threads, synchronous calls",
	Reuse:                  "shared",
	MaxPerHost:             0,
	MaxIdlePerHost:         5,
	IdleTimeout:            5 * time.Minute,
	MaxLifetime:            0,
	Protocol:               "http1",
	Timeout:                10 * time.Second,
	IdlePick:               PickCreated,
	UncheckedIdle:          NeverChecked,
	ClosesOnTimeout:        true,
	RetriesStaleIdempotent: true,
	Sources: []string{
		"square/okhttp@parent-4.12.0 okhttp/src/main/kotlin/okhttp3/ConnectionPool.kt constructor() : this(5, 5, TimeUnit.MINUTES)",
		"square/okhttp@parent-4.12.0 okhttp/src/main/kotlin/okhttp3/internal/connection/RealConnectionPool.kt cleanup idleConnectionCount > maxIdleConnections, callAcquirePooledConnection for (connection in connections)",
		"square/okhttp@parent-4.12.0 okhttp/src/main/kotlin/okhttp3/Dispatcher.kt maxRequestsPerHost = 5, maxRequests = 64 (async calls only)",
		"square/okhttp@parent-4.12.0 okhttp/src/main/kotlin/okhttp3/internal/connection/RealConnection.kt isHealthy IDLE_CONNECTION_HEALTHY_NS = 10 s and doExtensiveChecks; ExchangeFinder doExtensiveHealthChecks = method != \"GET\"",
		"square/okhttp@parent-4.12.0 okhttp/src/main/kotlin/okhttp3/OkHttpClient.kt readTimeout = 10_000, callTimeout = 0, retryOnConnectionFailure = true",
		"square/okhttp@parent-4.12.0 okhttp/src/main/kotlin/okhttp3/internal/http/RetryAndFollowUpInterceptor.kt recover: the method is not consulted",
	},
	RequestCPU:    46700 * time.Nanosecond,
	ConnectionCPU: 315 * time.Microsecond,
	CPUSources: []string{
		"cmd/cpucost -cases okhttp-apache on one core of an AMD EPYC (Linux 6.18), OkHttp 4.12.0 on JDK 17 after warm-up, against a local Go server: 46.7 µs a request on a kept connection, 362 µs when the server closes each, so 315 µs a new connection",
	},
	Resolution: &Resolution{Cache: jvmNames.Cache, Pick: AddressFirst, Sources: append([]string{
		"square/okhttp@parent-4.12.0 okhttp/src/main/kotlin/okhttp3/Dns.kt SYSTEM: InetAddress.getAllByName(hostname).toList(), in the order they will be attempted",
		"square/okhttp@parent-4.12.0 okhttp/src/main/kotlin/okhttp3/internal/connection/RouteSelector.kt: one route per address, in order; failed routes postponed",
	}, jvmNames.Sources...)},
}

// apacheHTTPClient5 is Apache HttpClient 5 (classic), one CloseableHttpClient
// built by HttpClients.createDefault(), shared by all threads.
//
// Pool: at most 5 connections per route (25 in all): a sixth concurrent request
// waits for a lease, up to 3 minutes. Idle connections are not capped apart,
// so up to 5. A connection expires at the server's Keep-Alive: timeout=, else 3
// minutes after its return, and closes at its next lease.
//
// Idle pick: LIFO (PoolReusePolicy.LIFO).
//
// Idle check: only a connection idle 2 s or more is checked for the server's
// close before reuse (validateAfterInactivity); a younger one is used unchecked.
//
// Timeout: none by default (no response timeout; connect 3 minutes).
//
// Stale connection: retried once, at once, for idempotent methods
// (DefaultHttpRequestRetryStrategy: 1 retry; NoHttpResponseException and a reset
// are retriable).
var apacheHTTPClient5 = Profile{
	Name:                   "apache-httpclient5",
	Summary:                "Apache HttpClient 5 classic, one pooled client shared by all threads (5 per route)",
	Reuse:                  "shared",
	MaxPerHost:             5,
	MaxIdlePerHost:         5,
	IdleTimeout:            3 * time.Minute,
	MaxLifetime:            0,
	Protocol:               "http1",
	Timeout:                0,
	IdlePick:               PickLIFO,
	UncheckedIdle:          2 * time.Second,
	ClosesOnTimeout:        true,
	RetriesStaleIdempotent: true,
	Sources: []string{
		"apache/httpcomponents-client@rel/v5.6.4 httpclient5/src/main/java/org/apache/hc/client5/http/impl/io/PoolingHttpClientConnectionManager.java DEFAULT_MAX_CONNECTIONS_PER_ROUTE = 5, DEFAULT_MAX_TOTAL_CONNECTIONS = 25, PoolReusePolicy.LIFO",
		"apache/httpcomponents-client@rel/v5.6.4 httpclient5/src/main/java/org/apache/hc/client5/http/impl/io/PoolingHttpClientConnectionManager.java resolveValidateAfterInactivity TimeValue.ofSeconds(2)",
		"apache/httpcomponents-client@rel/v5.6.4 httpclient5/src/main/java/org/apache/hc/client5/http/impl/DefaultConnectionKeepAliveStrategy.java; config/RequestConfig.java DEFAULT_CONN_KEEP_ALIVE = TimeValue.ofMinutes(3)",
		"apache/httpcomponents-client@rel/v5.6.4 httpclient5/src/main/java/org/apache/hc/client5/http/config/RequestConfig.java DEFAULT_CONNECTION_REQUEST_TIMEOUT = Timeout.ofMinutes(3)",
		"apache/httpcomponents-core@rel/v5.4.3 httpcore5/src/main/java/org/apache/hc/core5/pool/StrictConnPool.java free LIFO addFirst",
		"apache/httpcomponents-client@rel/v5.6.4 httpclient5/src/main/java/org/apache/hc/client5/http/impl/DefaultHttpRequestRetryStrategy.java this(1, TimeValue.ofSeconds(1L)), handleAsIdempotent",
	},
	RequestCPU:    67700 * time.Nanosecond,
	ConnectionCPU: 193 * time.Microsecond,
	CPUSources: []string{
		"cmd/cpucost -cases okhttp-apache on one core of an AMD EPYC (Linux 6.18), Apache HttpClient 5.6.4 (classic) on JDK 17 after warm-up, against a local Go server: 67.7 µs a request on a kept connection, 261 µs when the server closes each, so 193 µs a new connection",
	},
	Resolution: &Resolution{Cache: jvmNames.Cache, Pick: AddressFirst, Sources: append([]string{
		"apache/httpcomponents-client@rel/v5.6.4 httpclient5/src/main/java/org/apache/hc/client5/http/SystemDefaultDnsResolver.java resolve: InetAddress.getAllByName",
		"apache/httpcomponents-client@rel/v5.6.4 httpclient5/src/main/java/org/apache/hc/client5/http/impl/io/DefaultHttpClientConnectionOperator.java connect: retrying connection to the next address",
	}, jvmNames.Sources...)},
}
