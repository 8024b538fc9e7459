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
}
