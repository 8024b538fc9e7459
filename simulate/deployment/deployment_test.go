package deployment

import (
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"trafficlab/scenario"
	"trafficlab/sim"
)

type fakePod struct {
	name            string
	rev             int32
	ready, deleting bool
	readySince      sim.Time
}

// cluster is one service's pods; every pod is placed at once and starts unready.
type cluster struct {
	pods []fakePod
	log  []string
}

func (c *cluster) Active(_ int32, into []Replica) []Replica {
	for i, p := range c.pods {
		if !p.deleting {
			into = append(into, Replica{Pod: int32(i), Pending: -1, Revision: p.rev, Name: p.name, UID: p.name,
				Node: "node-0", Ready: p.ready, ReadySince: p.readySince})
		}
	}
	return into
}

func (c *cluster) Terminating(int32, int32) bool { return false }

func (c *cluster) Create(_ int32, rev int32) (string, bool, string) {
	name := fmt.Sprintf("web-%d", len(c.pods))
	c.pods = append(c.pods, fakePod{name: name, rev: rev})
	c.log = append(c.log, "create "+name)
	return name, true, ""
}

func (c *cluster) Delete(pod int32) {
	c.pods[pod].deleting = true
	c.log = append(c.log, "delete "+c.pods[pod].name)
}

func (c *cluster) DeletePending(int) { panic("no pending pods here") }

// TestScaleInDeletesUnreadyPodsFirst: the ReplicaSet controller ranks a pod that
// is not ready before the ready ones (controller_utils.go ActivePods).
func TestScaleInDeletesUnreadyPodsFirst(t *testing.T) {
	k := sim.New()
	c := &cluster{pods: []fakePod{{name: "web-0", ready: true}, {name: "web-1"}, {name: "web-2", ready: true}}}
	d := New(k, c)
	d.Add(&scenario.Service{Name: "web", Replicas: 3})
	d.Scale(0, 2, "test")
	if want := []string{"delete web-1"}; !slices.Equal(c.log, want) {
		t.Errorf("got %q, want %q", c.log, want)
	}
	if ev := d.ScaleEvents(); len(ev) != 1 || ev[0].From != 3 || ev[0].To != 2 || !slices.Equal(ev[0].Deleted, []string{"web-1"}) {
		t.Errorf("scale events %+v", ev)
	}
}

// TestRollingUpdateSurgesOneAtATime follows a rollout of 2 replicas with maxSurge 1
// and maxUnavailable 0: a new pod is made, an old one goes only when the new one is
// ready, and the rollout is done when both new pods are.
func TestRollingUpdateSurgesOneAtATime(t *testing.T) {
	k := sim.New()
	c := &cluster{pods: []fakePod{{name: "web-0", ready: true}, {name: "web-1", ready: true}}}
	d := New(k, c)
	one, zero := intstr.FromInt32(1), intstr.FromInt32(0)
	svc := &scenario.Service{Name: "web", Replicas: 2,
		Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &one, MaxUnavailable: &zero}},
		Rollouts: []scenario.Rollout{{At: metav1.Duration{Duration: time.Second}}}}
	d.Add(svc)
	d.QueueRollouts(0, sim.Duration(time.Minute))
	ready := func(at time.Duration, name string) {
		k.Run(sim.Duration(at))
		for i := range c.pods {
			if c.pods[i].name == name {
				c.pods[i].ready, c.pods[i].readySince = true, k.Now()
			}
		}
		d.Changed(0, 0)
	}
	k.Run(sim.Duration(2 * time.Second))
	if want := []string{"create web-2"}; !slices.Equal(c.log, want) {
		t.Fatalf("after the rollout began: %q, want %q", c.log, want)
	}
	ready(3*time.Second, "web-2")
	ready(5*time.Second, "web-3")
	k.Run(sim.Duration(time.Minute))
	want := []string{"create web-2", "delete web-0", "create web-3", "delete web-1"}
	if !slices.Equal(c.log, want) {
		t.Errorf("got %q, want %q", c.log, want)
	}
	ro := d.Rollouts()
	if len(ro) != 1 || ro[0].DoneS == nil || *ro[0].DoneS != 5 {
		t.Errorf("rollouts %+v, want one done at 5 s", ro)
	}
}
