package cluster

import (
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/tools/cache"
)

// readyChange is a service's ready endpoints changing, over every EndpointSlice
// of it: what kube-proxy programs the nodes' rules from.
type readyChange struct {
	at      time.Time
	service string
	ready   int
}

// endpointSlice records what an EndpointSlice event shows of its service's ready
// endpoints. An endpoint whose ready condition is unset counts as ready, as the
// API defines it (discovery/v1 EndpointConditions). The slices carry the run's
// labels, which the EndpointSlice controller copies from their Service.
func (w *watcher) endpointSlice(obj any, deleted bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return
	}
	service := s.Labels[discoveryv1.LabelServiceName]
	ready := 0
	for _, e := range s.Endpoints {
		if !deleted && (e.Conditions.Ready == nil || *e.Conditions.Ready) {
			ready++
		}
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || !w.services[service] {
		return
	}
	if w.slices[service] == nil {
		w.slices[service] = map[string]int{}
	}
	w.slices[service][s.Name] = ready
	total := 0
	for _, n := range w.slices[service] {
		total += n
	}
	if last, seen := w.readyAt(service, now); !seen || last != total {
		w.readyChanges = append(w.readyChanges, readyChange{at: now, service: service, ready: total})
	}
}

// readyAt is service's ready endpoints at t, and whether any slice of it had
// been seen by then. w.mu is held.
func (w *watcher) readyAt(service string, t time.Time) (int, bool) {
	ready, seen := 0, false
	for _, c := range w.readyChanges {
		if c.at.After(t) {
			break
		}
		if c.service == service {
			ready, seen = c.ready, true
		}
	}
	return ready, seen
}
