package library

import "time"

// gRPC clients. A channel (grpc-go's ClientConn, grpc-java's ManagedChannel,
// Grpc.Net.Client's GrpcChannel) is shared by the process, and with its default
// load-balancing policy, pick_first, it keeps one connection to the first address
// its target resolves to. Behind a ClusterIP that is one connection, pinned by
// kube-proxy to one pod for as long as it lives: every call of the client pod goes
// to that pod. When the connection closes or the server sends GOAWAY, the channel
// re-resolves its target, goes idle, and its next call opens a new connection.
// Calls a server refused unprocessed (after its GOAWAY, or REFUSED_STREAM) are
// retried once, transparently.
//
// ClosesOnTimeout is for HTTP/1 pools; over HTTP/2 a call past its deadline resets
// its stream only, as the engines do for every multiplexed pool. None of the three
// sends keepalive pings unless asked: a channel notices a dead connection only
// when a call on it fails or times out.

// grpcGo is grpc-go's ClientConn (grpc.NewClient, dns:/// target by default).
// Calls beyond the server's SETTINGS_MAX_CONCURRENT_STREAMS wait for a stream on
// the one connection (it never opens a second for that). After 30 minutes without
// a call the channel goes idle and closes its connection. No default deadline.
var grpcGo = Profile{
	Name:            "grpc-go",
	Summary:         "grpc-go ClientConn, one channel per process, pick_first: one HTTP/2 connection",
	Reuse:           "shared",
	MaxPerHost:      1,
	IdleTimeout:     30 * time.Minute,
	Protocol:        "grpc",
	ClosesOnTimeout: true,
	Sources: []string{
		"grpc/grpc-go@v1.83.1 service_config.go name := pickfirst.Name; balancer/pickfirst/pickfirst.go shutdownRemainingLocked: one SubConn READY",
		"grpc/grpc-go@v1.83.1 clientconn.go onClose: ac.cc.resolveNow, updateConnectivityState(connectivity.Idle)",
		"grpc/grpc-go@v1.83.1 dialoptions.go defaultScheme: \"dns\", idleTimeout: 30 * time.Minute; clientconn.go enterIdleMode closes every connection",
		"grpc/grpc-go@v1.83.1 internal/transport/http2_client.go NewStream waits for streamsQuotaAvailable; errStreamDrain AllowTransparentRetry",
		"grpc/grpc-go@v1.83.1 stream.go shouldRetry: cs.firstAttempt && unprocessed, transparent retry",
		"grpc/grpc-go@v1.83.1 internal/transport/defaults.go defaultClientKeepaliveTime = infinity: no pings",
	},
	RequestCPU:    46900 * time.Nanosecond,
	ConnectionCPU: 224 * time.Microsecond,
	CPUSources: []string{
		"cmd/cpucost -cases grpc-go on one core of an AMD EPYC (Linux 6.18), grpc-go v1.83.1 unary health checks against a local grpc-go server: 46.9 µs a call on one ClientConn, 271 µs on a new ClientConn each, so 224 µs a new ClientConn and its connection",
	},
	Resolution: &Resolution{Pick: AddressFirst, Reresolve: 30 * time.Second, Sources: append([]string{
		"grpc/grpc-go@v1.83.1 internal/resolver/dns/dns_resolver.go MinResolutionInterval = 30 * time.Second: wait for the next ResolveNow, and 30 seconds at the very least",
		"grpc/grpc-go@v1.83.1 clientconn.go: Refresh the name resolver on any connection loss",
		"grpc/grpc-go@v1.83.1 balancer/pickfirst/pickfirst.go ShuffleAddressList false unless configured; keeps a READY SubConn still in the new address list",
	}, goNames.Sources...)},
}

// grpcJava is grpc-java's ManagedChannel (Netty or OkHttp transport). Calls beyond
// the stream limit are buffered on the one connection (Netty's
// StreamBufferingEncoder). After 30 minutes idle the channel closes its
// connection. No default deadline.
var grpcJava = Profile{
	Name:            "grpc-java",
	Summary:         "grpc-java ManagedChannel, one channel per process, pick_first: one HTTP/2 connection",
	Reuse:           "shared",
	MaxPerHost:      1,
	IdleTimeout:     30 * time.Minute,
	Protocol:        "grpc",
	ClosesOnTimeout: true,
	Sources: []string{
		"grpc/grpc-java@v1.83.1 core/src/main/java/io/grpc/internal/GrpcUtil.java DEFAULT_LB_POLICY = \"pick_first\"",
		"grpc/grpc-java@v1.83.1 core/src/main/java/io/grpc/internal/InternalSubchannel.java transportShutdown: addressIndex.reset(), gotoNonErrorState(IDLE)",
		"grpc/grpc-java@v1.83.1 core/src/main/java/io/grpc/internal/ManagedChannelImplBuilder.java IDLE_MODE_DEFAULT_TIMEOUT_MILLIS = TimeUnit.MINUTES.toMillis(30)",
		"grpc/grpc-java@v1.83.1 netty/src/main/java/io/grpc/netty/NettyClientHandler.java StreamBufferingEncoder; goingAway RpcProgress.REFUSED",
		"grpc/grpc-java@v1.83.1 core/src/main/java/io/grpc/internal/RetriableStream.java REFUSED transparent retry once",
		"grpc/grpc-java@v1.83.1 netty/src/main/java/io/grpc/netty/NettyChannelBuilder.java keepAliveTimeNanos = KEEPALIVE_TIME_NANOS_DISABLED",
	},
	Resolution: &Resolution{Cache: jvmNames.Cache, Pick: AddressFirst, Reresolve: 30 * time.Second, SkipsEarly: true, Sources: append([]string{
		"grpc/grpc-java@v1.83.1 core/src/main/java/io/grpc/internal/DnsNameResolver.java DEFAULT_NETWORK_CACHE_TTL_SECONDS = 30; refresh returns unless cacheRefreshRequired()",
		"grpc/grpc-java@v1.83.1 core/src/main/java/io/grpc/internal/PickFirstLoadBalancer.java: refreshNameResolution on IDLE or TRANSIENT_FAILURE",
	}, jvmNames.Sources...)},
}

// grpcDotnet is Grpc.Net.Client's GrpcChannel on its default SocketsHttpHandler,
// which it builds with EnableMultipleHttp2Connections = true: at the server's
// stream limit (Kestrel's 100) the channel opens another HTTP/2 connection rather
// than queue, and behind a ClusterIP kube-proxy may send that one to another pod.
// Idle connections close after a minute (PooledConnectionIdleTimeout). No default
// deadline.
var grpcDotnet = Profile{
	Name:            "grpc-dotnet",
	Summary:         "Grpc.Net.Client GrpcChannel, pick_first, another HTTP/2 connection at the stream limit",
	Reuse:           "shared",
	MaxPerHost:      0,
	IdleTimeout:     time.Minute,
	Protocol:        "grpc",
	ClosesOnTimeout: true,
	Sources: []string{
		"grpc/grpc-dotnet@v2.80.0 src/Grpc.Net.Client/Balancer/Internal/ChildHandlerLoadBalancer.cs: default to pick_first",
		"grpc/grpc-dotnet@v2.80.0 src/Shared/HttpHandlerFactory.cs new SocketsHttpHandler { EnableMultipleHttp2Connections = true }",
		"dotnet/runtime src/libraries/Common/src/System/Net/Http/HttpHandlerDefaults.cs DefaultPooledConnectionIdleTimeout = TimeSpan.FromMinutes(1)",
		"dotnet/runtime src/libraries/Common/src/System/Net/Http/HttpHandlerDefaults.cs DefaultKeepAlivePingDelay = Timeout.InfiniteTimeSpan: no pings",
		"dotnet/runtime src/libraries/System.Net.Http/src/System/Net/Http/SocketsHttpHandler/Http2Connection.cs ProcessGoAwayFrame: streams above lastStreamId OnReset(canRetry: true)",
	},
	// With a dns:/// address, which round_robin needs; on http:// the channel hands
	// SocketsHttpHandler the name, which resolves it for each new connection.
	Resolution: &Resolution{Pick: AddressFirst, Reresolve: 15 * time.Second, Sources: []string{
		"grpc/grpc-dotnet@v2.80.0 src/Grpc.Net.Client/Balancer/DnsResolver.cs MinimumDnsResolutionRate = TimeSpan.FromSeconds(15): a refresh sooner waits",
		"grpc/grpc-dotnet@v2.80.0 src/Grpc.Net.Client/Balancer/ResolverFactory.cs new DnsResolverFactory(Timeout.InfiniteTimeSpan): no periodic refresh",
		"grpc/grpc-dotnet@v2.80.0 src/Grpc.Net.Client/Balancer/PickFirstBalancer.cs RefreshResolver when the subchannel goes Idle",
	}},
}
