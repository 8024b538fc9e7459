package simulate

// envoyWindows are Envoy's HTTP/2 receive windows: initial_stream_window_size and
// initial_connection_window_size default to 256 MiB (api/envoy/config/core/v3/
// protocol.proto, Http2ProtocolOptions).
var envoyWindows = [2]int64{256 << 20, 256 << 20}

// receiveWindows are what a pod advertises to the connections it accepts: its
// sidecar's, or its app's.
func (e *Engine) receiveWindows(pod int32) [2]int64 {
	if e.pods[pod].envoy >= 0 {
		return envoyWindows
	}
	return e.services[e.pods[pod].svc].windows
}

// senderWindows are what the opening side of a connection of pool p advertises for
// the answers: an outbound envoy's, or the client app's.
func (e *Engine) senderWindows(pi int32) [2]int64 {
	if e.mesh.Owns(pi) {
		return envoyWindows
	}
	return e.deps[e.cpods[e.poolOwner[pi]].dep].windows
}
