package library

import "time"

// nodeUndici is Node.js's global fetch, which is undici's global Agent: one Pool
// per origin, each of its Clients one socket.
//
// Pool: no cap on connections (a new Client whenever every one is busy) and none
// on idle ones. A socket closes 4 s after its last answer, or at the server's
// Keep-Alive: timeout= less 2 s (3 s against a Node server); a hint of 2 s or
// less means no reuse. The profile keeps the 4 s of a server that sends no hint
// (Go, Kestrel).
//
// Idle pick: the first free Client in the order they were created
// (Pool kGetDispatcher scans its list from the start).
//
// Timeout: headersTimeout and bodyTimeout are 300 s each, inactivity timers, not a
// whole-request deadline; the profile takes 300 s as the request's timeout. A
// timeout destroys the socket.
//
// Stale connection: an idle socket is always read, so a FIN that arrived while it
// sat idle is seen before reuse. A request the close crosses fails with
// UND_ERR_SOCKET "other side closed" or ECONNRESET: the default Agent retries
// nothing (RetryAgent is opt-in).
var nodeUndici = Profile{
	Name:                   "node-undici",
	Summary:                "Node.js fetch (undici's global Agent), one pool per origin",
	Reuse:                  "shared",
	MaxPerHost:             0,
	MaxIdlePerHost:         0,
	IdleTimeout:            4 * time.Second,
	MaxLifetime:            0,
	Protocol:               "http1",
	Timeout:                300 * time.Second,
	IdlePick:               PickCreated,
	ClosesOnTimeout:        true,
	RetriesStaleIdempotent: false,
	Sources: []string{
		"nodejs/undici@v8.10.0 lib/global.js setGlobalDispatcher(new Agent())",
		"nodejs/undici@v8.10.0 lib/dispatcher/pool.js this[kConnections] = connections || null, kGetDispatcher",
		"nodejs/undici@v8.10.0 lib/dispatcher/client.js keepAliveTimeout == null ? 4e3, keepAliveTimeoutThreshold == null ? 2e3, headersTimeout 300e3, bodyTimeout 300e3",
		"nodejs/undici@v8.10.0 lib/dispatcher/client-h1.js onHeadersComplete keep-alive hint, onParserTimeout util.destroy(socket, new HeadersTimeoutError())",
		"nodejs/undici@v8.10.0 lib/dispatcher/client-h1.js onHttpSocketEnd SocketError('other side closed'), scheduleIdleSocketValidation",
		"nodejs/undici@v8.10.0 lib/handler/retry-handler.js: retries only through RetryAgent or the retry interceptor",
	},
	RequestCPU:    181 * time.Microsecond,
	ConnectionCPU: 332 * time.Microsecond,
	CPUSources: []string{
		"cmd/cpucost -cases node on one core of an AMD EPYC (Linux 6.18), Node.js v20.20.2's global fetch (its bundled undici) against a local Go server: 181 µs a request on a kept connection, 513 µs when the server closes each, so 332 µs a new connection (an earlier run: 171, 562 and 391 µs)",
	},
	Resolution: &Resolution{Pick: AddressFirst, Sources: append([]string{
		"nodejs/undici@v7.29.0 lib/core/connect.js: net.connect({...options, host: hostname}); the dns interceptor is opt-in",
	}, nodeNames.Sources...)},
}

// nodeHTTPAgent is Node.js's core http module with its globalAgent (Node 19 and
// later, which keep connections alive by default; before, each request closed
// its socket).
//
// Pool: no cap on sockets per host (maxSockets Infinity); at most 256 free ones
// (maxFreeSockets), extra returned sockets are destroyed. A free socket closes
// after 5 s (the globalAgent's timeout), or at the server's keep-alive hint less
// 1 s (4 s against a Node server). A custom new Agent({keepAlive: true}) has no
// idle timeout at all.
//
// Idle pick: LIFO since Node 15.6 and 14.17 (scheduling 'lifo'; FIFO before).
//
// Timeout: none; the agent's timeout destroys free sockets only. The usual
// request 'timeout' handler destroys the request and its socket, which is what
// the scenario's timeout models.
//
// Stale connection: a FIN on a free socket removes it from the pool. A request the
// close crosses fails with ECONNRESET "socket hang up": Node does not resend
// (its docs tell the caller to retry on request.reusedSocket).
var nodeHTTPAgent = Profile{
	Name:                   "node-http-agent",
	Summary:                "Node.js http.request with the globalAgent (Node 19+: keep-alive)",
	Reuse:                  "shared",
	MaxPerHost:             0,
	MaxIdlePerHost:         256,
	IdleTimeout:            5 * time.Second,
	MaxLifetime:            0,
	Protocol:               "http1",
	Timeout:                0,
	IdlePick:               PickLIFO,
	ClosesOnTimeout:        true,
	RetriesStaleIdempotent: false,
	Sources: []string{
		"nodejs/node lib/_http_agent.js globalAgent: new Agent({ keepAlive: true, scheduling: 'lifo', timeout: 5000 }) (the v24 source; no tag could be read, the repository is over the mirror's size limit)",
		"nodejs/node doc/api/http.md http.globalAgent changes v19.0.0 (pull/43522): keep-alive and a 5 second timeout by default",
		"nodejs/node lib/_http_agent.js Agent.defaultMaxSockets = Infinity, maxFreeSockets || 256, keepSocketAlive HTTP_AGENT_KEEP_ALIVE_TIMEOUT_BUFFER = 1000",
		"nodejs/node doc/api/http.md new Agent scheduling changes v15.6.0, v14.17.0 (pull/36685): default 'fifo' to 'lifo'",
		"nodejs/node lib/_http_client.js socketOnEnd ConnResetException('socket hang up'); doc/api/http.md request.reusedSocket",
	},
	RequestCPU:    86900 * time.Nanosecond,
	ConnectionCPU: 221 * time.Microsecond,
	CPUSources: []string{
		"cmd/cpucost -cases node on one core of an AMD EPYC (Linux 6.18), Node.js v20.20.2's http.get on the globalAgent against a local Go server: 86.9 µs a request on a kept connection, 308 µs when the server closes each, so 221 µs a new connection (an earlier run: 86.3, 305 and 219 µs)",
	},
	Resolution: &nodeNames,
}
