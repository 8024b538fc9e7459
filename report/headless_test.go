package report_test

import (
	"testing"
)

// Behind a headless Service the spread is the clients' own doing, and the report
// says which client behaviour made it and which fix applies; no sentence blames
// kube-proxy, and an even spread is left unexplained.
func TestHeadlessSpreadExplained(t *testing.T) {
	headless := "spec.services[0].clusterIP=None"
	for _, c := range []struct {
		name       string
		sets       []string
		want, lack []string
	}{
		{"pick_first", []string{headless},
			[]string{"orders is headless", "A pick_first channel (grpc-go's default)", "connections.loadBalancing: round_robin",
				"Connections by client pod: checkout-0 → orders-",
				"headless (clients connect to the pods its name resolves to)"},
			[]string{"kube-proxy (iptables) chooses", "behind its ClusterIP", "maxConnectionAge"}},
		{"round_robin is even", []string{headless, "spec.clients[0].connections.loadBalancing=round_robin"},
			nil, []string{"Why the load", "kube-proxy (iptables) chooses"}},
		{"ClusterIP", nil,
			[]string{"kube-proxy (iptables) chooses", "behind its ClusterIP"}, []string{"is headless", "resolves"}},
		{"the JVM's cache", []string{headless, "spec.clients[0].library=okhttp", "spec.clients[0].replicas=1"},
			[]string{"okhttp keeps an answer 30s", "networkaddress.cache.ttl"}, []string{"round_robin", "pick_first"}},
		{"ab resolves once", []string{headless, "spec.clients[0].library=ab-keepalive", "spec.clients[0].replicas=1"},
			[]string{"ab-keepalive keeps its first answer for the whole run", "each client pod reaches one pod"}, []string{"round_robin"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkText(t, simulateSource(t, "grpc.yaml", []byte(grpcPinned), c.sets...), c.want, c.lack)
		})
	}
}

// A round_robin channel that resolved before a scale-out reaches none of the new
// pods, and the report says so and names maxConnectionAge; once the server ages
// its connections the channels reach them, within the age and the re-resolution
// interval, which the report says instead.
func TestHeadlessRoundRobinAfterScaleOut(t *testing.T) {
	sets := []string{"spec.services[0].clusterIP=None", "spec.clients[0].connections.loadBalancing=round_robin",
		"spec.duration=150s"}
	for _, c := range []struct {
		name       string
		age        []string
		want, lack []string
	}{
		{"no age", nil, []string{"came after the channels had resolved, and got no connection", "within the age (give or take 10 %) plus 30s"},
			[]string{"kube-proxy (iptables) chooses"}},
		// Pods ready at 92 s wait up to 22 s for a connection to age out and 30 s for
		// the channel's next resolution: over the 58 s left they are behind still.
		{"aged", []string{"spec.services[0].pod.grpc={maxConnectionAge: 20s}"},
			[]string{"The server ends each connection after 20s", "a shorter age reaches them sooner"}, []string{"got no connection"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkText(t, simulateSource(t, "hpa.yaml", []byte(grpcScaleOut), append(sets, c.age...)...), c.want, c.lack)
		})
	}
}

const grpcScaleOut = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: grpc-scale-out}
spec:
  duration: 150s
  seed: 1
  cluster:
    nodes: [{name: worker, count: 4, cpu: "2"}]
  services:
  - name: orders
    replicas: 2
    pod:
      cpu: "1"
      serviceTime: {distribution: exponential, mean: 1ms}
      readinessProbe: {periodSeconds: 5}
    autoscaler:
      minReplicas: 2
      maxReplicas: 8
      metrics:
      - type: Resource
        resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
  clients:
  - name: checkout
    target: orders
    replicas: 4
    library: grpc-go
    threads: 4
    thinkTime: {distribution: exponential, mean: 2ms}
`

// A headless Service with no ready pod fails its clients' lookups, and the report
// says DNS did it, where a ClusterIP's would say kube-proxy refused.
func TestNoReadyPodSaysWhoFailed(t *testing.T) {
	src := []byte(`apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: zero}
spec:
  duration: 5s
  services:
  - name: db
    replicas: 0
    pod:
      serviceTime: {distribution: exponential, mean: 1ms}
  clients:
  - name: c
    target: db
    threads: 1
    thinkTime: {distribution: constant, value: 100ms}
`)
	for _, c := range []struct {
		sets       []string
		want, lack string
	}{
		{[]string{"spec.services[0].clusterIP=None"}, "cluster DNS answers its name NXDOMAIN", "REJECT"},
		{nil, "kube-proxy REJECTs new connections", "NXDOMAIN"},
	} {
		checkText(t, simulateSource(t, "zero.yaml", src, c.sets...), []string{c.want}, []string{c.lack})
	}
}
