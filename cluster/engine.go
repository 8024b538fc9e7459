package cluster

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"trafficlab/cluster/manifests"
	"trafficlab/emulate/load"
	"trafficlab/result"
	"trafficlab/scenario"
)

// Options say where a run goes and what its pods run.
type Options struct {
	Config *rest.Config
	// Namespace runs it in this existing namespace; "" makes one of its own,
	// tl-SCENARIO-ID, deleted at the end.
	Namespace string
	// Image is trafficlab's image as the nodes reach it; PullPolicy Never for
	// one loaded onto the nodes.
	Image      string
	PullPolicy corev1.PullPolicy
	// Version is this trafficlab's: pods running another are refused.
	Version string
	// ReadyTimeout bounds each wait for pods: scheduling, pulling the image,
	// starting, becoming ready.
	ReadyTimeout time.Duration
	// Log hears what the run does; Progress how far the load is, every second.
	Log      io.Writer
	Progress func(done, total time.Duration)
}

// Run runs sc, a scenario loaded with its defaults, on the cluster: it applies
// the run's objects, waits for the service pods to be ready and the load pods to
// wait for their start, releases the load pods at one instant, follows what
// they stream and what the cluster's pods and autoscalers do, and deletes what
// it made, also on an error or when ctx ends. ctx's end stops the load pods
// early; they report what ran, and the Result covers that.
func Run(ctx context.Context, sc *scenario.Scenario, o Options) (*result.Result, error) {
	cs, err := kubernetes.NewForConfig(o.Config)
	if err != nil {
		return nil, err
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 3 * time.Minute
	}
	run := manifests.Run{ID: NewID(), Image: o.Image, PullPolicy: o.PullPolicy, InNamespace: o.Namespace}
	objs, warnings, err := manifests.Build(sc, run)
	if err != nil {
		return nil, err
	}
	found, err := Inspect(ctx, cs, o.Config, sc)
	if err != nil {
		return nil, err
	}
	ns := run.Namespace(sc)
	found.Namespace, found.Image = ns, o.Image
	for _, w := range append(warnings, found.Differences...) {
		fmt.Fprintf(o.Log, "cluster: %s\n", w)
	}
	e := &engine{sc: sc, o: o, cs: cs, run: run, ns: ns, found: found}
	defer e.delete(objs)
	if err := e.apply(ctx, objs); err != nil {
		return nil, err
	}
	var onRunning func(pod, service string)
	if sc.HasCalls() {
		e.figs = newFigures(cs, ns, sc.Spec.Duration.Duration+2*o.ReadyTimeout+figuresWait)
		defer e.figs.cancel()
		onRunning = e.figs.follow
	}
	w, err := watch(ctx, cs, e.ns, run.Labels(), sc, onRunning)
	if err != nil {
		return nil, err
	}
	defer w.stop()
	e.watch = w
	fmt.Fprintf(o.Log, "cluster: namespace %s: waiting for the service pods to be ready\n", e.ns)
	if err := e.waitServing(ctx); err != nil {
		return nil, err
	}
	for _, j := range objs.Jobs {
		if _, err := cs.BatchV1().Jobs(e.ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("creating Job %s: %w", j.Name, err)
		}
	}
	fmt.Fprintf(o.Log, "cluster: waiting for the load pods to start\n")
	loads, err := e.waitLoads(ctx)
	if err != nil {
		return nil, err
	}
	return e.load(ctx, loads)
}

// engine is one run on the cluster.
type engine struct {
	sc    *scenario.Scenario
	o     Options
	cs    kubernetes.Interface
	run   manifests.Run
	ns    string
	found *result.ClusterRun
	watch *watcher
	figs  *figures // the service pods' own, with calls; else nil
}

// NewID is a run's ID: five lower-case letters and digits.
func NewID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// apply creates the run's namespace (unless it runs in an existing one), its
// Deployments, Services and HPAs.
func (e *engine) apply(ctx context.Context, o *manifests.Objects) error {
	if o.Namespace != nil {
		if _, err := e.cs.CoreV1().Namespaces().Create(ctx, o.Namespace, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating namespace %s: %w", o.Namespace.Name, err)
		}
	}
	for _, d := range o.Deployments {
		if _, err := e.cs.AppsV1().Deployments(e.ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating Deployment %s: %w", d.Name, err)
		}
	}
	for _, s := range o.Services {
		if _, err := e.cs.CoreV1().Services(e.ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating Service %s: %w", s.Name, err)
		}
	}
	for _, h := range o.HPAs {
		if _, err := e.cs.AutoscalingV2().HorizontalPodAutoscalers(e.ns).Create(ctx, h, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating HorizontalPodAutoscaler %s: %w", h.Name, err)
		}
	}
	return nil
}

// delete deletes what the run made: its namespace, or in an existing namespace
// its objects, their pods with them. It runs at the end, also after an error or
// an interruption, so it has a context of its own.
func (e *engine) delete(o *manifests.Objects) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	if o.Namespace != nil {
		fmt.Fprintf(e.o.Log, "cluster: deleting namespace %s\n", e.ns)
		err = e.cs.CoreV1().Namespaces().Delete(ctx, e.ns, metav1.DeleteOptions{})
	} else {
		fmt.Fprintf(e.o.Log, "cluster: deleting the run's objects in namespace %s\n", e.ns)
		err = DeleteLabelled(ctx, e.cs, e.ns, manifests.RunLabel+"="+e.run.ID)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		fmt.Fprintf(e.o.Log, "cluster: deleting the run: %v (trafficlab cluster --cleanup deletes what is left)\n", err)
	}
}

// waitServing waits until every service's Deployment has its replicas ready, a
// pod that fails or restarts being an error.
func (e *engine) waitServing(ctx context.Context) error {
	return e.until(ctx, "the service pods to be ready", func() (bool, error) {
		for i := range e.sc.Spec.Services {
			s := &e.sc.Spec.Services[i]
			d, err := e.cs.AppsV1().Deployments(e.ns).Get(ctx, s.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if !available(d) {
				pods, err := e.pods(ctx, "app="+s.Name)
				if err != nil {
					return false, err
				}
				return false, podTrouble(pods)
			}
		}
		return true, nil
	})
}

// available says d's pods are all updated and ready.
func available(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	return d.Status.ObservedGeneration >= d.Generation && d.Status.ReadyReplicas == want && d.Status.UpdatedReplicas == want
}

// pods are the run's pods matching selector.
func (e *engine) pods(ctx context.Context, selector string) ([]corev1.Pod, error) {
	list, err := e.cs.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// podTrouble is an error when one of pods cannot run: its image is missing, it
// crashed or it failed.
func podTrouble(pods []corev1.Pod) error {
	for _, p := range pods {
		if p.Status.Phase == corev1.PodFailed {
			return fmt.Errorf("pod %s failed: %s %s", p.Name, p.Status.Reason, p.Status.Message)
		}
		for _, c := range p.Status.ContainerStatuses {
			if w := c.State.Waiting; w != nil && (w.Reason == "ErrImageNeverPull" || w.Reason == "ImagePullBackOff" || w.Reason == "ErrImagePull" || w.Reason == "CrashLoopBackOff" || w.Reason == "CreateContainerError") {
				return fmt.Errorf("pod %s on %s: %s: %s", p.Name, p.Spec.NodeName, w.Reason, w.Message)
			}
			if t := c.LastTerminationState.Terminated; t != nil {
				return fmt.Errorf("pod %s on %s restarted: its app exited %d (%s) %s", p.Name, p.Spec.NodeName, t.ExitCode, t.Reason, t.Message)
			}
		}
	}
	return nil
}

// loadPod is one client pod: where it runs and, once it ran, what it measured.
type loadPod struct {
	pod    string // its name in the cluster
	run    load.PodRun
	stream error
}

// waitLoads waits until every client pod runs and its load waits for the start
// time, and checks that it runs this trafficlab's version. They come in the
// scenario's order of clients and indexes.
func (e *engine) waitLoads(ctx context.Context) ([]*loadPod, error) {
	var pods []*loadPod
	err := e.until(ctx, "the load pods to wait for their start", func() (bool, error) {
		pods = pods[:0]
		for i := range e.sc.Spec.Clients {
			c := &e.sc.Spec.Clients[i]
			list, err := e.pods(ctx, "client="+c.Name)
			if err != nil {
				return false, err
			}
			if err := podTrouble(list); err != nil {
				return false, err
			}
			for idx := range c.Replicas {
				p := jobPod(list, idx)
				if p == nil || p.Status.Phase != corev1.PodRunning {
					return false, nil
				}
				version, ok, err := e.readyLine(ctx, p.Name)
				if err != nil || !ok {
					return false, err
				}
				if version != e.o.Version {
					return false, fmt.Errorf("pod %s runs trafficlab %s, this is %s: make the image of this version (trafficlab image) and give it with --image", p.Name, version, e.o.Version)
				}
				// The load names itself as the scenario names its pod (its --name).
				pods = append(pods, &loadPod{pod: p.Name, run: load.PodRun{Client: i, Name: fmt.Sprintf("%s-%d", c.Name, idx),
					Node: p.Spec.NodeName, Limit: cpuLimit(p)}})
			}
		}
		return true, nil
	})
	return pods, err
}

// jobPod is the pod of an indexed Job's completion index idx, nil if none yet.
func jobPod(pods []corev1.Pod, idx int) *corev1.Pod {
	for i := range pods {
		if pods[i].Annotations["batch.kubernetes.io/job-completion-index"] == fmt.Sprint(idx) {
			return &pods[i]
		}
	}
	return nil
}

// cpuLimit is a pod's CPU limit in cores (its one container's), 0 without one.
func cpuLimit(p *corev1.Pod) float64 {
	return p.Spec.Containers[0].Resources.Limits.Cpu().AsApproximateFloat64()
}

// readyLine looks in a load pod's log for the line `trafficlab load --stream`
// prints when it waits for its start time, and the version it names.
func (e *engine) readyLine(ctx context.Context, pod string) (version string, ok bool, err error) {
	raw, err := e.cs.CoreV1().Pods(e.ns).GetLogs(pod, &corev1.PodLogOptions{Container: "load"}).DoRaw(ctx)
	if err != nil {
		return "", false, nil // not yet readable: the container has just started
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := load.ReadyVersion(line); ok {
			return v, true, nil
		}
	}
	return "", false, nil
}

// until polls cond every half second until it holds or fails, for at most the
// ready timeout.
func (e *engine) until(ctx context.Context, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(e.o.ReadyTimeout)
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waited %v for %s (--ready-timeout)", e.o.ReadyTimeout, what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// load releases the load pods at one start time, follows what they stream until
// they end, and makes the Result. ctx's end deletes the load pods: each gets its
// SIGTERM, stops and reports what ran.
func (e *engine) load(ctx context.Context, pods []*loadPod) (*result.Result, error) {
	total := e.sc.Spec.Duration.Duration
	// Attaching takes a round trip or two per pod: the start leaves time for all.
	start := time.Now().Add(time.Second + time.Duration(len(pods))*200*time.Millisecond)
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.pod
	}
	if err := Release(ctx, e.o.Config, e.cs, e.ns, names, start); err != nil {
		return nil, err
	}
	e.watch.startAt(start)
	rolling, stopRolling := context.WithCancel(ctx)
	rolled := make(chan struct{})
	go func() { defer close(rolled); e.rollOut(rolling, start) }()
	cpu := newCPUMeter(e.cs, e.ns, e.watch)
	cpu.start(start)
	fmt.Fprintf(e.o.Log, "cluster: %d load pods released for %v\n", len(pods), total)
	// The streams outlive ctx: stopped pods still report.
	follow, cancelFollow := context.WithTimeout(context.Background(), total+e.o.ReadyTimeout)
	defer cancelFollow()
	tl := load.NewTimeline(len(pods))
	var wg sync.WaitGroup
	for i, p := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer tl.Ended(i)
			p.run.Report, p.stream = Follow(follow, e.cs, e.ns, p.pod, tl.Adder(i))
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	stopped, stop := false, ctx.Done()
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-stop:
			stopped, stop = true, nil // a closed channel would be ready again at once
			fmt.Fprintf(e.o.Log, "cluster: stopping the load pods: they report what ran\n")
			for _, p := range pods {
				_ = e.cs.CoreV1().Pods(e.ns).Delete(context.Background(), p.pod, metav1.DeleteOptions{})
			}
		case <-tick.C:
			if e.o.Progress != nil {
				e.o.Progress(min(max(time.Since(start), 0), total), total)
			}
		}
	}
	ran := total
	if stopped {
		ran = min(max(time.Since(start), 0), total)
	}
	stopRolling()
	<-rolled
	cpu.stop()
	if e.figs != nil {
		e.watch.close()
		e.endServices()
	}
	var errs []error
	for _, p := range pods {
		if p.stream != nil {
			errs = append(errs, fmt.Errorf("load pod %s: %w", p.pod, p.stream))
		}
	}
	r := e.result(pods, ran, cpu, tl)
	if stopped {
		errs = append(errs, ctx.Err())
	}
	return r, errors.Join(errs...)
}
