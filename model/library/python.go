package library

import "time"

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
	Resolution: &Resolution{Pick: AddressFirst, Sources: append([]string{
		"urllib3/urllib3@2.2.3 src/urllib3/util/connection.py create_connection: for res in socket.getaddrinfo(...), sock.connect(sa), except OSError: next",
	}, getaddrinfoNames...)},
}

// pythonHTTPX is one httpx.Client (httpcore underneath) shared by the process.
// The module functions (httpx.get) build a Client per call and reuse nothing.
//
// Pool: at most 100 connections, further requests wait; at most 20 kept alive
// (httpcore 1.0.9 counts every pooled connection against that cap, so an idle one
// closes whenever the pool holds over 20); an idle connection expires after 5 s.
//
// Idle pick: the first idle connection in creation order.
//
// Timeout: 5 s for connect, read, write and pool each (per operation; taken here
// as the request's). A timeout leaves h11 unusable, so the connection closes.
//
// Stale connection: a readable idle socket counts as closed and is dropped. A
// request the close crosses fails (RemoteProtocolError "Server disconnected
// without sending a response", or ReadError): the pool retries nothing of that.
var pythonHTTPX = Profile{
	Name:                   "python-httpx",
	Summary:                "Python httpx.Client (httpcore), one client shared by all threads",
	Reuse:                  "shared",
	MaxPerHost:             100,
	MaxIdlePerHost:         20,
	IdleTimeout:            5 * time.Second,
	MaxLifetime:            0,
	Protocol:               "http1",
	Timeout:                5 * time.Second,
	IdlePick:               PickCreated,
	ClosesOnTimeout:        true,
	RetriesStaleIdempotent: false,
	Sources: []string{
		"encode/httpx@0.28.1 httpx/_config.py DEFAULT_LIMITS = Limits(max_connections=100, max_keepalive_connections=20), keepalive_expiry = 5.0, DEFAULT_TIMEOUT_CONFIG = Timeout(timeout=5.0)",
		"encode/httpx@0.28.1 httpx/_transports/default.py HTTPTransport http2: bool = False, retries: int = 0",
		"encode/httpcore@1.0.9 httpcore/_sync/connection_pool.py _assign_requests_to_connections available_connections[0], max_keepalive_connections check",
		"encode/httpcore@1.0.9 httpcore/_sync/http11.py has_expired server_disconnected, _receive_event RemoteProtocolError",
	},
	RequestCPU:    215 * time.Microsecond,
	ConnectionCPU: 69100 * time.Nanosecond,
	CPUSources: []string{
		"cmd/cpucost -cases python-httpx-aiohttp on one core of an AMD EPYC (Linux 6.18), httpx 0.28.1 on CPython 3.11 against a local Go server: 215 µs a request on a kept connection, 285 µs when the server closes each, so 69.1 µs a new connection",
	},
	Resolution: &Resolution{Pick: AddressFirst, Sources: append([]string{
		"encode/httpcore@1.0.9 httpcore/_backends/sync.py connect_tcp: socket.create_connection",
		"python/cpython@v3.11.7 Lib/socket.py create_connection: for res in getaddrinfo(host, port, 0, SOCK_STREAM)",
	}, getaddrinfoNames...)},
}

// pythonAiohttp is one aiohttp.ClientSession (TCPConnector) shared by the process.
//
// Pool: at most 100 connections in use in all, none per host beyond that; no cap
// on idle ones; an idle connection older than 15 s is closed when taken or by the
// cleanup that runs every 15 s.
//
// Idle pick: FIFO, the longest idle first (a deque: append on release, popleft on
// take).
//
// Timeout: 300 s for the whole request (ClientTimeout total), 30 s to connect.
//
// Stale connection: since 3.10, a request with an idempotent method that fails
// with ServerDisconnectedError or a reset is sent once more, on whatever
// connection the pool gives next.
var pythonAiohttp = Profile{
	Name:                   "python-aiohttp",
	Summary:                "Python aiohttp.ClientSession (TCPConnector), one session per process",
	Reuse:                  "shared",
	MaxPerHost:             100,
	MaxIdlePerHost:         0,
	IdleTimeout:            15 * time.Second,
	MaxLifetime:            0,
	Protocol:               "http1",
	Timeout:                300 * time.Second,
	IdlePick:               PickFIFO,
	ClosesOnTimeout:        true,
	RetriesStaleIdempotent: true,
	Sources: []string{
		"aio-libs/aiohttp@v3.14.3 aiohttp/connector.py BaseConnector limit: int = 100, limit_per_host: int = 0, keepalive_timeout = 15.0, _get conns.popleft(), _release append",
		"aio-libs/aiohttp@v3.14.3 aiohttp/client.py DEFAULT_TIMEOUT ClientTimeout(total=5 * 60, sock_connect=30)",
		"aio-libs/aiohttp@v3.14.3 aiohttp/client.py IDEMPOTENT_METHODS, retry_persistent_connection (commit 6e3e53c67, first in v3.10.0)",
	},
	RequestCPU:    86200 * time.Nanosecond,
	ConnectionCPU: 170 * time.Microsecond,
	CPUSources: []string{
		"cmd/cpucost -cases python-httpx-aiohttp on one core of an AMD EPYC (Linux 6.18), aiohttp 3.14.3 on CPython 3.11 against a local Go server, one request awaited at a time: 86.2 µs a request on a kept connection, 256 µs when the server closes each, so 170 µs a new connection",
	},
	// TCPConnector caches answers 10 s and hands each new connection the cached
	// addresses rotated by one: round robin over the pods of one answer.
	Resolution: &Resolution{Cache: 10 * time.Second, Pick: AddressRotate, Sources: []string{
		"aio-libs/aiohttp@v3.14.3 aiohttp/connector.py TCPConnector use_dns_cache: bool = True, ttl_dns_cache: int | None = 10",
		"aio-libs/aiohttp@v3.14.3 aiohttp/connector.py _DNSCacheTable.next_addrs: Consume one more element to shift internal state of cycle",
	}},
}
