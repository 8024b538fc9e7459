package cluster

import (
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A service's ready endpoints are summed over its slices, an unset condition
// counting as ready; a deleted slice counts none; other services' slices and
// events after the run are not recorded.
func TestReadyEndpoints(t *testing.T) {
	yes, no := true, false
	slice := func(name, service string, ready ...*bool) *discoveryv1.EndpointSlice {
		s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: service}}}
		for _, r := range ready {
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Conditions: discoveryv1.EndpointConditions{Ready: r}})
		}
		return s
	}
	w := &watcher{services: map[string]bool{"web": true}, slices: map[string]map[string]int{}}
	var marks []time.Time
	mark := func() { marks = append(marks, time.Now()); time.Sleep(time.Millisecond) }
	for _, step := range []func(){
		func() { w.endpointSlice(slice("web-a", "web", &yes, &yes, &no), false) },
		func() { w.endpointSlice(slice("web-b", "web", nil), false) },
		func() { w.endpointSlice(slice("db-a", "db", &yes), false) },
		func() { w.endpointSlice(slice("web-a", "web", &no, &no), false) },
		func() { w.endpointSlice(slice("web-b", "web", nil), true) },
		func() { w.close(); w.endpointSlice(slice("web-a", "web", &yes), false) },
	} {
		step()
		mark()
	}
	for i, want := range []int{2, 3, 3, 1, 0, 0} {
		if got, seen := w.readyAt("web", marks[i]); got != want || !seen {
			t.Errorf("after step %d: %d ready (seen %v), want %d", i, got, seen, want)
		}
	}
	if _, seen := w.readyAt("db", marks[5]); seen {
		t.Errorf("a service the scenario does not have was recorded")
	}
	if _, seen := w.readyAt("web", marks[0].Add(-time.Second)); seen {
		t.Errorf("ready endpoints seen before any slice")
	}
}
