package cluster

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"trafficlab/result"
	"trafficlab/scenario"
)

// watcher follows the run's service pods and Deployments as the cluster changes
// them: when each pod was created, became ready, began deleting and was gone, on
// which node, and each change of a Deployment's replicas (the HPA's doing). The
// times are this machine's, when the watch delivered the change, so that a
// cluster clock that differs does not matter.
type watcher struct {
	mu       sync.Mutex
	services map[string]bool
	pods     []*podLife
	byUID    map[string]*podLife
	replicas map[string]int32 // each Deployment's spec.replicas, last seen
	scales   []scaleChange
	rollouts []*rollout // those the engine started, in order
	// slices are each service's EndpointSlices' ready endpoints, by slice name;
	// readyChanges their sums' changes, in order.
	slices       map[string]map[string]int
	readyChanges []readyChange
	nodeSet      map[string]bool // the nodes any of the run's pods is on
	start        time.Time       // the load's start, zero until released
	// closed: the run is over, and what the engine then does to end it is not
	// the run's.
	closed bool
	// onRunning hears of each service pod whose app runs, as often as the watch
	// sees it; nil when nobody asks.
	onRunning func(pod, service string)
	stopCh    chan struct{}
}

// podLife is one service pod's life as the watch saw it; zero times have not
// happened.
type podLife struct {
	name, service, node            string
	created, ready, deleting, gone time.Time
	limitCPU                       float64
	qos                            string
}

// scaleChange is a Deployment's spec.replicas changing from one count to another.
type scaleChange struct {
	at       time.Time
	service  string
	from, to int32
}

// watch starts following the run's objects in namespace ns, the labelled ones.
func watch(ctx context.Context, cs kubernetes.Interface, ns string, runLabels map[string]string, sc *scenario.Scenario, onRunning func(pod, service string)) (*watcher, error) {
	w := &watcher{services: map[string]bool{}, byUID: map[string]*podLife{}, nodeSet: map[string]bool{}, replicas: map[string]int32{},
		slices: map[string]map[string]int{}, onRunning: onRunning, stopCh: make(chan struct{})}
	for i := range sc.Spec.Services {
		w.services[sc.Spec.Services[i].Name] = true
	}
	selector := labels.SelectorFromSet(runLabels).String()
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	pods, deployments, slices := f.Core().V1().Pods().Informer(), f.Apps().V1().Deployments().Informer(), f.Discovery().V1().EndpointSlices().Informer()
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.pod(obj, false) },
		UpdateFunc: func(_, obj any) { w.pod(obj, false) },
		DeleteFunc: func(obj any) { w.pod(obj, true) },
	}); err != nil {
		return nil, err
	}
	if _, err := deployments.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.deployment(obj) },
		UpdateFunc: func(_, obj any) { w.deployment(obj) },
	}); err != nil {
		return nil, err
	}
	if _, err := slices.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.endpointSlice(obj, false) },
		UpdateFunc: func(_, obj any) { w.endpointSlice(obj, false) },
		DeleteFunc: func(obj any) { w.endpointSlice(obj, true) },
	}); err != nil {
		return nil, err
	}
	f.Start(w.stopCh)
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			close(w.stopCh)
			return nil, fmt.Errorf("watching the run's %v: %w", typ, ctx.Err())
		}
	}
	return w, nil
}

func (w *watcher) stop() { close(w.stopCh) }

// nodes are the nodes the run's pods are on, sorted.
func (w *watcher) nodes() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Sorted(maps.Keys(w.nodeSet))
}

// lives are the service pods' lives so far, in the order the watch first saw
// them.
func (w *watcher) lives() []*podLife {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.pods)
}

// close ends the run for the watch: it records nothing after.
func (w *watcher) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
}

// startAt sets the load's start, the time every figure counts from.
func (w *watcher) startAt(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.start = t
}

// pod records what a pod event shows of a service pod.
func (w *watcher) pod(obj any, deleted bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if p.Spec.NodeName != "" {
		w.nodeSet[p.Spec.NodeName] = true
	}
	if !w.services[p.Labels["app"]] {
		return
	}
	if w.onRunning != nil && slices.ContainsFunc(p.Status.ContainerStatuses, func(c corev1.ContainerStatus) bool { return c.Name == "app" && c.State.Running != nil }) {
		w.onRunning(p.Name, p.Labels["app"])
	}
	l := w.byUID[string(p.UID)]
	if l == nil {
		l = &podLife{name: p.Name, service: p.Labels["app"], created: now, qos: string(p.Status.QOSClass), limitCPU: cpuLimit(p)}
		w.byUID[string(p.UID)] = l
		w.pods = append(w.pods, l)
	}
	if p.Spec.NodeName != "" {
		l.node = p.Spec.NodeName
	}
	if l.qos == "" {
		l.qos = string(p.Status.QOSClass)
	}
	if l.ready.IsZero() && podReady(p) {
		l.ready = now
	}
	if l.deleting.IsZero() && p.DeletionTimestamp != nil {
		l.deleting = now
	}
	if l.gone.IsZero() && (deleted || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed) {
		l.gone = now
	}
}

// podReady says p's Ready condition is true.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// deployment records a change of a Deployment's spec.replicas, and the end of a
// rollout.
func (w *watcher) deployment(obj any) {
	d, ok := obj.(*appsv1.Deployment)
	if !ok || d.Spec.Replicas == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	n, now := *d.Spec.Replicas, time.Now()
	if from, seen := w.replicas[d.Name]; seen && from != n {
		w.scales = append(w.scales, scaleChange{at: now, service: d.Name, from: from, to: n})
	}
	w.replicas[d.Name] = n
	w.rolloutsDone(d, now)
}

// since is t as seconds since the start, at least 0.
func (w *watcher) since(t time.Time) float64 {
	return result.Round(max(t.Sub(w.start), 0).Seconds(), 6)
}

// replicasAt counts each service's pods at d since the start, those created and
// not yet deleting, and its ready endpoints then, as its EndpointSlices showed
// them.
func (w *watcher) replicasAt(d time.Duration) (replicas, ready map[string]int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	replicas, ready = map[string]int{}, map[string]int{}
	for s := range w.services {
		replicas[s], ready[s] = 0, 0
	}
	at := w.start.Add(d)
	before := func(t time.Time) bool { return !t.IsZero() && !t.After(at) }
	for _, l := range w.pods {
		if l.created.After(at) || before(l.deleting) {
			continue
		}
		replicas[l.service]++
	}
	for s := range w.services {
		ready[s], _ = w.readyAt(s, at)
	}
	return replicas, ready
}

// scaleEvents are the Deployments' replica changes after the start, with the
// HPA's reason from its SuccessfulRescale events ("New size: 3; reason: cpu
// resource utilization (percentage of request) above target", as
// pkg/controller/podautoscaler/horizontal.go records them), and the pods each
// created or began deleting: those of its service created, or deleting, after
// it and before the service's next change.
func (w *watcher) scaleEvents(reasons map[string][]rescale) []result.ScaleEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []result.ScaleEvent
	for i, s := range w.scales {
		if s.at.Before(w.start) {
			continue
		}
		ev := result.ScaleEvent{TS: w.since(s.at), Service: s.service, From: int(s.from), To: int(s.to)}
		if k := slices.IndexFunc(reasons[s.service], func(r rescale) bool { return r.size == s.to }); k >= 0 {
			ev.Reason = reasons[s.service][k].reason
			reasons[s.service] = slices.Delete(reasons[s.service], k, k+1)
		}
		next := time.Time{}
		for _, later := range w.scales[i+1:] {
			if later.service == s.service {
				next = later.at
				break
			}
		}
		within := func(t time.Time) bool { return !t.IsZero() && !t.Before(s.at) && (next.IsZero() || t.Before(next)) }
		for _, l := range w.pods {
			if l.service != s.service {
				continue
			}
			if s.to > s.from && within(l.created) {
				ev.Created = append(ev.Created, l.name)
			}
			if s.to < s.from && within(l.deleting) {
				ev.Deleted = append(ev.Deleted, l.name)
			}
		}
		out = append(out, ev)
	}
	return out
}

// rescale is one HPA SuccessfulRescale event: the size it set and why.
type rescale struct {
	size   int32
	reason string
}

// rescales are the HPAs' SuccessfulRescale events in namespace ns, by HPA (its
// service), oldest first.
func rescales(ctx context.Context, cs kubernetes.Interface, ns string) (map[string][]rescale, error) {
	list, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=HorizontalPodAutoscaler,reason=SuccessfulRescale"})
	if err != nil {
		return nil, err
	}
	items := list.Items
	slices.SortStableFunc(items, func(a, b corev1.Event) int { return eventTime(a).Compare(eventTime(b)) })
	out := map[string][]rescale{}
	for _, ev := range items {
		var size int32
		if _, err := fmt.Sscanf(ev.Message, "New size: %d;", &size); err != nil {
			continue
		}
		_, reason, _ := strings.Cut(ev.Message, "reason: ")
		for range max(ev.Count, 1) { // the same message again counts up one Event
			out[ev.InvolvedObject.Name] = append(out[ev.InvolvedObject.Name], rescale{size: size, reason: reason})
		}
	}
	return out, nil
}

func eventTime(e corev1.Event) time.Time {
	if !e.EventTime.IsZero() {
		return e.EventTime.Time
	}
	return e.FirstTimestamp.Time
}
