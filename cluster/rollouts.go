package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"trafficlab/result"
)

// restartedAt is the pod-template annotation kubectl rollout restart sets
// (kubectl's polymorphichelpers/objectrestarter.go): a new value makes a new
// template, which the Deployment controller rolls out by the Deployment's
// strategy. Using kubectl's own key shows the rollout as kubectl's would look.
const restartedAt = "kubectl.kubernetes.io/restartedAt"

// rollout is one rollout the engine started.
type rollout struct {
	service, strategy string
	started, done     time.Time
	// generation is the Deployment's after the restart: the rollout is done once
	// the controller has observed it and every pod is new and available.
	generation int64
}

// rollOut restarts each service's Deployment at each of its rollouts' times since
// start, as kubectl rollout restart does, until ctx ends.
func (e *engine) rollOut(ctx context.Context, start time.Time) {
	type due struct {
		at                time.Duration
		service, strategy string
	}
	var plan []due
	for _, s := range e.sc.Spec.Services {
		for _, r := range s.Rollouts {
			plan = append(plan, due{r.At.Duration, s.Name, string(s.Strategy.Type)})
		}
	}
	slices.SortStableFunc(plan, func(a, b due) int { return cmp.Compare(a.at, b.at) })
	for _, d := range plan {
		wait := time.NewTimer(time.Until(start.Add(d.at)))
		select {
		case <-ctx.Done():
			wait.Stop()
			return
		case <-wait.C:
		}
		patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{
			"metadata": map[string]any{"annotations": map[string]string{restartedAt: time.Now().Format(time.RFC3339Nano)}}}}})
		dep, err := e.cs.AppsV1().Deployments(e.ns).Patch(ctx, d.service, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
		if err != nil {
			fmt.Fprintf(e.o.Log, "cluster: the rollout of %s at %v did not start: %v\n", d.service, d.at, err)
			continue
		}
		e.watch.rolloutStarted(rollout{service: d.service, strategy: d.strategy, started: time.Now(), generation: dep.Generation})
	}
}

// rolloutStarted records a rollout the engine started.
func (w *watcher) rolloutStarted(r rollout) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rollouts = append(w.rollouts, &r)
}

// rolloutsDone marks done the rollouts of d's service that d's status shows
// complete, as kubectl rollout status decides it (kubectl's
// polymorphichelpers/rollout_status.go): the generation observed, every replica
// updated, no old one left, every updated one available. w.mu is held.
func (w *watcher) rolloutsDone(d *appsv1.Deployment, now time.Time) {
	st := &d.Status
	for _, r := range w.rollouts {
		if r.service != d.Name || !r.done.IsZero() || st.ObservedGeneration < r.generation {
			continue
		}
		if st.UpdatedReplicas == *d.Spec.Replicas && st.Replicas == st.UpdatedReplicas && st.AvailableReplicas == st.UpdatedReplicas {
			r.done = now
		}
	}
}

// rolloutResults are the rollouts started, each with the pods of its service
// created after it started, and the older ones deleting after it started, until
// it was done (or the service's next rollout, or the end).
func (w *watcher) rolloutResults() []result.Rollout {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []result.Rollout
	for i, r := range w.rollouts {
		end := r.done
		for _, later := range w.rollouts[i+1:] {
			if later.service == r.service {
				if end.IsZero() || later.started.Before(end) {
					end = later.started
				}
				break
			}
		}
		within := func(t time.Time) bool { return !t.IsZero() && !t.Before(r.started) && (end.IsZero() || !t.After(end)) }
		ro := result.Rollout{Service: r.service, Strategy: r.strategy, StartS: w.since(r.started)}
		if !r.done.IsZero() {
			ro.DoneS = seconds(w.since(r.done))
		}
		var deleted []*podLife
		for _, l := range w.pods {
			if l.service != r.service {
				continue
			}
			if within(l.created) {
				ro.Created = append(ro.Created, l.name)
			}
			if l.created.Before(r.started) && within(l.deleting) {
				deleted = append(deleted, l)
			}
		}
		slices.SortStableFunc(deleted, func(a, b *podLife) int { return a.deleting.Compare(b.deleting) })
		for _, l := range deleted {
			ro.Deleted = append(ro.Deleted, l.name)
		}
		out = append(out, ro)
	}
	return out
}
