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
}
