package placement

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"trafficlab/model/scheduler"
	"trafficlab/scenario"
)

// Each kind of pod as kube-scheduler sees it: named and owned by kind, labelled
// app: NAME unless its own labels say otherwise, its CPU request counted, pinned or
// constrained as its spec says.
func TestViews(t *testing.T) {
	half := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}
	zone := map[string]string{"zone": "a"}
	spread := []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: corev1.DoNotSchedule}}
	for _, tc := range []struct {
		name string
		got  scheduler.Pod
		want scheduler.Pod
	}{
		{"service pod", ServicePod(&scenario.Service{Name: "web", Pod: scenario.Pod{Resources: half, NodeSelector: zone}}, "web-3"),
			scheduler.Pod{Name: "service/web-3", Owner: "service/web", Labels: map[string]string{"app": "web"}, CPURequest: 0.5, NodeSelector: zone}},
		{"service pod with its own app label", ServicePod(&scenario.Service{Name: "web", Pod: scenario.Pod{Labels: map[string]string{"app": "shop", "tier": "1"}, NodeName: "n-1"}}, "web-0"),
			scheduler.Pod{Name: "service/web-0", Owner: "service/web", Labels: map[string]string{"app": "shop", "tier": "1"}, NodeName: "n-1"}},
		{"service pod spread", ServicePod(&scenario.Service{Name: "web", Pod: scenario.Pod{TopologySpreadConstraints: spread}}, "web-0"),
			scheduler.Pod{Name: "service/web-0", Owner: "service/web", Labels: map[string]string{"app": "web"}, TopologySpreadConstraints: spread}},
		{"client pod", ClientPod(&scenario.Client{Name: "caller"}, "caller-2"),
			scheduler.Pod{Name: "client/caller-2", Owner: "client/caller", Labels: map[string]string{"app": "caller"}}},
		{"client pod placed", ClientPod(&scenario.Client{Name: "gen", Resources: half, Placement: &scenario.Placement{NodeSelector: zone}}, "gen-0"),
			scheduler.Pod{Name: "client/gen-0", Owner: "client/gen", Labels: map[string]string{"app": "gen"}, CPURequest: 0.5, NodeSelector: zone}},
		{"background pinned", BackgroundPod(&scenario.Background{Name: "backup", Node: "n-0", Placement: &scenario.Placement{NodeSelector: zone}, Resources: half}),
			scheduler.Pod{Name: "background/backup", Owner: "background/backup", Labels: map[string]string{"app": "backup"}, CPURequest: 0.5, NodeName: "n-0"}},
		{"background placed", BackgroundPod(&scenario.Background{Name: "backup", Placement: &scenario.Placement{NodeSelector: zone}}),
			scheduler.Pod{Name: "background/backup", Owner: "background/backup", Labels: map[string]string{"app": "backup"}, NodeSelector: zone}},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, tc.got, tc.want)
		}
	}
}

// The scheduler's nodes are the pools' in order, named POOL-N, as the engines
// number them.
func TestNewSchedulerNamesTheNodesInOrder(t *testing.T) {
	spec := &scenario.Spec{Seed: 1, Cluster: scenario.Cluster{Nodes: []scenario.NodePool{{Name: "a", Count: 2}, {Name: "b", Count: 2}}}}
	for want, node := range []string{"a-0", "a-1", "b-0", "b-1"} {
		got, err := NewScheduler(spec).Schedule(scheduler.Pod{Name: "p", NodeName: node})
		if err != nil || got != want {
			t.Errorf("pinned to %s: node %d, %v; want %d", node, got, err, want)
		}
	}
}
