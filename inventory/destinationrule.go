package inventory

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// istioNetworking is the API group of Istio's traffic objects, any version
// (v1alpha3, v1beta1, v1).
const istioNetworking = "networking.istio.io/"

// DestinationRule is the part of Istio's DestinationRule an import reads: the
// host and its traffic policy's load balancer, connection pool and outlier
// detection (istio.io/api networking/v1alpha3/destination_rule.proto). Fields
// it does not read are skipped: Istio adds some in every release.
type DestinationRule struct {
	APIVersion        string `json:"apiVersion"`
	Kind              string `json:"kind"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Host          string         `json:"host"`
		TrafficPolicy *TrafficPolicy `json:"trafficPolicy,omitempty"`
	} `json:"spec"`
}

// TrafficPolicy is a DestinationRule's policy for its host.
type TrafficPolicy struct {
	LoadBalancer *struct {
		// Simple is ROUND_ROBIN, LEAST_REQUEST, RANDOM or PASSTHROUGH.
		Simple string `json:"simple,omitempty"`
	} `json:"loadBalancer,omitempty"`
	ConnectionPool   *ConnectionPool `json:"connectionPool,omitempty"`
	OutlierDetection map[string]any  `json:"outlierDetection,omitempty"`
}

// ConnectionPool is the rule's limits, which Envoy enforces as the cluster's
// circuit breakers.
type ConnectionPool struct {
	TCP *struct {
		MaxConnections *int64 `json:"maxConnections,omitempty"`
	} `json:"tcp,omitempty"`
	HTTP *struct {
		HTTP1MaxPendingRequests *int64 `json:"http1MaxPendingRequests,omitempty"`
		HTTP2MaxRequests        *int64 `json:"http2MaxRequests,omitempty"`
		MaxRetries              *int64 `json:"maxRetries,omitempty"`
	} `json:"http,omitempty"`
}
