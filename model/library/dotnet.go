package library

import "time"

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
	// Whether System.Net.NameResolution caches on Linux is not established; the
	// docs say HttpClient resolves only when it opens a connection.
	Resolution: &Resolution{Pick: AddressFirst, Sources: []string{
		"dotnet/runtime@01b9a79719d8 src/libraries/System.Net.Http/src/System/Net/Http/SocketsHttpHandler/ConnectionPool/HttpConnectionPool.cs ConnectToTcpHostAsync: new DnsEndPoint(host, port)",
		"dotnet/runtime@00e5fccdc062 src/libraries/System.Net.Sockets/src/System/Net/Sockets/SocketAsyncEventArgs.cs DnsConnectAsync: Try each address in turn",
		"dotnet/docs@076fb78ec958 docs/fundamentals/networking/http/httpclient-guidelines.md: HttpClient only resolves DNS entries when a connection is created",
	}},
}
