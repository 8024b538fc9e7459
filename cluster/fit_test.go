package cluster_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trafficlab/cluster"
)

// Fit says which of a run's pods no node of the cluster takes, and why, as the
// scheduler every engine shares decides; a scenario that fits gets nothing said.
func TestFit(t *testing.T) {
	node := func(name string, cpu string, labels map[string]string, taints []corev1.Taint, ready bool) corev1.Node {
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}}}
	}
	two := []corev1.Node{node("node-0", "2", nil, nil, true), node("node-1", "2", nil, nil, true)}
	noSchedule := []corev1.Taint{{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
	for _, tc := range []struct {
		name  string
		nodes []corev1.Node
		sets  []string
		want  []string // one sentence each, by what it contains
	}{
		{"fits", two, nil, nil},
		{"a selector no node matches", two, []string{"spec.services[0].pod.nodeSelector={pool: fast}"},
			[]string{"service webapp1: 5 of 5 pods fit no node of the cluster (0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.)"}},
		{"CPU requests beyond a node", []corev1.Node{two[0]}, []string{"spec.services[0].pod.resources={requests: {cpu: 700m}}"},
			[]string{"service webapp1: 3 of 5 pods fit no node", "Insufficient cpu"}},
		{"a taint, and a node not ready", []corev1.Node{node("node-0", "2", nil, noSchedule, true), node("node-1", "2", nil, nil, false)}, nil,
			[]string{"service webapp1: 5 of 5 pods fit no node", "untolerated taint", "client caller: 1 of 1 pods fit no node"}},
		{"pinned to a node of the scenario", two, []string{"spec.services[0].pod.nodeName=aks-1"},
			[]string{"service webapp1: its pods are pinned to the scenario's node aks-1; on the cluster its scheduler places them"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := cluster.Fit(tc.nodes, load(t, "r1-curl-loop.yaml", tc.sets...))
			all := strings.Join(got, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("said\n%s\nwant %q", all, w)
				}
			}
			if len(tc.want) == 0 && len(got) > 0 {
				t.Errorf("said %q, want nothing", got)
			}
		})
	}
}
