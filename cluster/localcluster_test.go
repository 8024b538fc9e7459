package cluster_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"trafficlab/cluster"
	"trafficlab/cluster/manifests"
	"trafficlab/containerimage"
	"trafficlab/emulate/topo"
	"trafficlab/examples"
	"trafficlab/internal/localcluster"
	"trafficlab/report"
	"trafficlab/result"
	"trafficlab/scenario"
	"trafficlab/simulate"
)

// TestOnTheLocalCluster applies a run's objects to the cluster
// hack/localcluster.sh runs (./test.sh brings it up and gives its kubeconfig in
// TRAFFICLAB_CLUSTER_KUBECONFIG): the serve pods become Ready without a restart;
// the Service's ClusterIP answers from a node through the real kube-proxy, with
// new connections spread over both pods; the cluster's DNS answers the Service's
// name, and a headless Service's with the pods; and the load pod, released with a
// start time, runs and reports through its log. Deleting the namespace takes
// every object with it.
func TestOnTheLocalCluster(t *testing.T) {
	cfg, cs := localcluster.Client(t)
	sc := load(t, "grpc-headless-round-robin.yaml", "spec.duration=10s", "spec.clients[0].replicas=1",
		"spec.services[0].replicas=2", "spec.services[0].pod.cpu=200m")
	o, _, err := manifests.Build(sc, manifests.Run{ID: fmt.Sprintf("t%d", time.Now().Unix()%100000), Image: os.Getenv("TRAFFICLAB_CLUSTER_IMAGE"), PullPolicy: corev1.PullNever})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := o.Namespace.Name
	if _, err := cs.CoreV1().Namespaces().Create(ctx, o.Namespace, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	for _, d := range o.Deployments {
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range o.Services {
		if _, err := cs.CoreV1().Services(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, j := range o.Jobs {
		if _, err := cs.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The serve pods Ready, none restarted; the load pod running.
	until(ctx, t, "2 serve pods Ready and the load pod running", func() (bool, error) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready, running := 0, 0
		for _, p := range pods.Items {
			for _, c := range p.Status.ContainerStatuses {
				if c.RestartCount > 0 {
					return false, fmt.Errorf("pod %s restarted: %+v", p.Name, c.LastTerminationState)
				}
				if c.Ready && p.Labels["app"] == "orders" {
					ready++
				}
			}
			if p.Labels["client"] == "checkout" && p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return ready == 2 && running == 1, nil
	})
	svc, err := cs.CoreV1().Services(ns).Get(ctx, "orders", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Both pods in the Service's EndpointSlice, ready; node-1's kube-proxy has them
	// in its rules after its watch and its next sync, at most minSyncPeriod (1 s)
	// after the last: 2 s later. Sampling before, with one pod in the rules, would
	// send every connection to it.
	until(ctx, t, "the EndpointSlice to list both pods ready", func() (bool, error) {
		slices, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=orders"})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, sl := range slices.Items {
			for _, ep := range sl.Endpoints {
				if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
					ready++
				}
			}
		}
		return ready == 2, nil
	})
	time.Sleep(2 * time.Second)
	// From node-1's network namespace, through its kube-proxy's rules: each
	// connection made on the goroutine InNetns runs f on (an http.Transport would
	// dial on another, outside the namespace).
	answered := map[string]int{}
	addr := net.JoinHostPort(svc.Spec.ClusterIP, fmt.Sprint(manifests.ServicePort))
	if err := topo.InNetns("tlc-node-1", func() error {
		// kube-proxy rejects connections to the ClusterIP until its rules list the
		// endpoints.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err == nil {
				conn.Close()
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the ClusterIP never answered: %w", err)
			}
		}
		for range 40 {
			conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				return err
			}
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			fmt.Fprint(conn, "GET / HTTP/1.1\r\nHost: orders\r\nConnection: close\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				conn.Close()
				return err
			}
			io.Copy(io.Discard, resp.Body)
			conn.Close()
			answered[resp.Header.Get("X-Trafficlab-Pod")]++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// 40 new connections, each to either pod with p = 1/2: one pod getting none
	// has probability 2·2^-40.
	if len(answered) != 2 {
		t.Errorf("40 connections through the ClusterIP answered by %v, want both pods", answered)
	}

	// The cluster's DNS answers the Service's name with its ClusterIP, and a
	// headless Service's with its ready pods.
	headless := o.Services[0].DeepCopy()
	headless.Name, headless.Spec.ClusterIP = "orders-headless", corev1.ClusterIPNone
	if _, err := cs.CoreV1().Services(ns).Create(ctx, headless, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dnsServer := net.JoinHostPort(cfgHost(t, cfg), "53")
	resolver := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, dnsServer)
	}}
	until(ctx, t, "DNS answers for both Services", func() (bool, error) {
		cip, err1 := resolver.LookupHost(ctx, "orders."+ns+".svc.cluster.local.")
		pods, err2 := resolver.LookupHost(ctx, "orders-headless."+ns+".svc.cluster.local.")
		return err1 == nil && err2 == nil && len(cip) == 1 && cip[0] == svc.Spec.ClusterIP && len(pods) == 2, nil
	})

	// Released with a start time on its stdin, the load pod runs its 10 s and
	// streams what it measured in its log.
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "client=checkout"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("load pods %v, %v", pods, err)
	}
	pod := pods.Items[0].Name
	if err := cluster.Release(ctx, cfg, cs, ns, []string{pod}, time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	intervals := 0
	rep, err := cluster.Follow(ctx, cs, ns, pod, func(int64, *hdr.Histogram) { intervals++ })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the load pod: %d answered, %d failed, pods %+v, %d intervals", rep.Requests.OK, rep.Requests.Failed, rep.Pods, intervals)
	// 8 threads of a pinned grpc-go channel for 10 s: thousands of calls, to one
	// pod, a timeline interval each second.
	if rep.Requests.OK < 1000 || rep.Requests.Failed != 0 || len(rep.Pods) != 1 || intervals < 9 {
		t.Errorf("report %+v, pods %+v, %d intervals: want thousands of calls answered by the channel's one pod, 10 intervals", rep.Requests, rep.Pods, intervals)
	}
}

// load is an example scenario with overrides, its defaults filled in.
func load(t *testing.T, file string, sets ...string) *scenario.Scenario {
	t.Helper()
	data, err := examples.Get(file)
	if err != nil {
		t.Fatal(err)
	}
	sc, _, diags := scenario.Load(file, data, sets)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return sc
}

// localOptions run on the local cluster, with the image it holds (its tag is
// its version: trafficlab.local/trafficlab:VERSION), telling log what they do.
func localOptions(cfg *rest.Config, log io.Writer) cluster.Options {
	image := os.Getenv("TRAFFICLAB_CLUSTER_IMAGE")
	return cluster.Options{Config: cfg, Image: image, PullPolicy: corev1.PullNever,
		Version: containerimage.RefVersion(image), ReadyTimeout: time.Minute, Log: log}
}

// runOnLocal runs sc on the local cluster within timeout, logging what the
// engine says.
func runOnLocal(t *testing.T, cfg *rest.Config, sc *scenario.Scenario, timeout time.Duration) *result.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var log strings.Builder
	r, err := cluster.Run(ctx, sc, localOptions(cfg, &log))
	t.Log(log.String())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// until polls cond every half second until it holds, fails, or ctx ends.
func until(ctx context.Context, t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not within the time", what)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// cfgHost is the API server's address, where the local cluster's DNS answers too.
func cfgHost(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	u, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	return u.Hostname()
}

// TestEngineOnTheLocalCluster runs scenarios with the cluster engine, on the
// local cluster's real kube-proxy: a new connection per request spreads over
// every pod (Pearson's chi-square against an even spread, p = 0.001), one reused
// connection stays on one pod, and pods of another trafficlab version are
// refused. After each run its namespace goes away.
func TestEngineOnTheLocalCluster(t *testing.T) {
	cfg, cs := localcluster.Client(t)
	image := os.Getenv("TRAFFICLAB_CLUSTER_IMAGE")
	version := containerimage.RefVersion(image)
	for _, tc := range []struct {
		name, file string
		version    string
		check      func(t *testing.T, r *result.Result)
	}{
		{"a new connection per request spreads", "r1-curl-loop.yaml", version, func(t *testing.T, r *result.Result) {
			var counts []int64
			var total int64
			for _, p := range r.Pods {
				counts = append(counts, p.Requests)
				total += p.Requests
			}
			// 4 degrees of freedom: 18.467 at p = 0.001 (standard tables).
			if x := chiSquare(counts, total); len(counts) != 5 || total < 200 || x > 18.467 {
				t.Errorf("requests by pod %v (χ² %.1f): want 5 pods, 200 requests or more, spread evenly (χ² ≤ 18.467)", counts, x)
			}
			// One connection per request sent: the one request a thread may have in
			// flight when the run ends has its connection but has not ended, so it is
			// among Sent and not among Requests.
			if c := r.Clients[0]; c.ConnectionsOpened < c.Requests || c.ConnectionsOpened > c.Sent || c.Sent > c.Requests+int64(c.Threads*c.Replicas) {
				t.Errorf("%d connections for %d requests ended and %d sent by %d threads: want one each", c.ConnectionsOpened, c.Requests, c.Sent, c.Threads*c.Replicas)
			}
		}},
		{"one reused connection stays on one pod", "r1-reused-client-1-thread.yaml", version, func(t *testing.T, r *result.Result) {
			var answered []string
			for _, p := range r.Pods {
				if p.Requests > 0 {
					answered = append(answered, p.Name)
				}
			}
			if len(answered) != 1 || r.Clients[0].ConnectionsOpened != 1 || r.Requests.OK < 1000 {
				t.Errorf("answered by %v over %d connections, %d answered: want one pod, one connection, thousands", answered, r.Clients[0].ConnectionsOpened, r.Requests.OK)
			}
		}},
		{"pods of another version are refused", "r1-reused-client-1-thread.yaml", "v0.0.0-other", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := load(t, tc.file, "spec.duration=10s")
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			var log strings.Builder
			opt := localOptions(cfg, &log)
			opt.Version = tc.version
			r, err := cluster.Run(ctx, sc, opt)
			t.Log(log.String())
			switch {
			case tc.check == nil:
				if err == nil || !strings.Contains(err.Error(), "runs trafficlab "+version+", this is v0.0.0-other") {
					t.Errorf("error %v: want the pods' version refused", err)
				}
			case err != nil:
				t.Fatal(err)
			default:
				// The local cluster's kube-proxy is as the scenario says (iptables,
				// minSyncPeriod 1s, published in its ConfigMap as kubeadm does), and
				// the pods fit its nodes: the differences are the clients' library
				// CPU, which trafficlab's load generator does not spend, and the
				// scenario's 100 µs of network latency, which is not added.
				if r.Engine != "cluster" || r.Requests.Failed != 0 || len(r.Timeline) < 9 || r.Cluster == nil || r.Cluster.Version == "" ||
					r.Cluster.ProxyMode != "iptables" || r.Cluster.ProxyMinSyncPeriodS == nil || *r.Cluster.ProxyMinSyncPeriodS != 1 ||
					len(r.Cluster.Differences) != 2 || !strings.Contains(r.Cluster.Differences[0], "its pods run trafficlab's own load generator") ||
					!strings.Contains(r.Cluster.Differences[1], "the cluster's own network carries the traffic, without the scenario's latency 100µs") {
					t.Errorf("engine %q, %+v, %d timeline points, cluster %+v: want the cluster's, none failed, 10 points, kube-proxy as the scenario says, the library's CPU and the network's latency the differences", r.Engine, r.Requests, len(r.Timeline), r.Cluster)
				}
				// The load pod's generator says what CPU it spent, however short the run.
				if c := r.Clients[0]; c.CPUCores <= 0 || c.CPUPerRequestMS <= 0 {
					t.Errorf("client CPU %g cores, %g ms a request: want what its generator spent", c.CPUCores, c.CPUPerRequestMS)
				}
				tc.check(t, r)
			}
			// The namespace goes: its objects with it.
			until(ctx, t, "the run's namespace gone", func() (bool, error) {
				list, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: manifests.ManagedByLabel + "=" + manifests.ManagedBy})
				return err == nil && len(list.Items) == 0, err
			})
		})
	}
}

// Stopped 3 s into its load, a run stops its load pods, which report what ran:
// the Result covers those seconds, and the namespace goes.
func TestEngineStoppedOnTheLocalCluster(t *testing.T) {
	cfg, cs := localcluster.Client(t)
	sc := load(t, "r1-reused-client-1-thread.yaml", "spec.duration=60s", "spec.services[0].replicas=2")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	stop, stopRun := context.WithCancel(ctx)
	defer stopRun()
	var log strings.Builder
	opt := localOptions(cfg, &log)
	opt.Progress = func(done, _ time.Duration) {
		if done >= 3*time.Second {
			stopRun()
		}
	}
	r, err := cluster.Run(stop, sc, opt)
	t.Log(log.String())
	if !errors.Is(err, context.Canceled) || r == nil {
		t.Fatalf("result %v, error %v: want what ran, and the run's context's end", r != nil, err)
	}
	// Progress comes every second: the stop comes 3 to 4 s in, and the pods end a
	// moment after their deletion.
	if r.DurationS < 3 || r.DurationS > 10 || r.Requests.OK < 100 || len(r.Timeline) < 3 {
		t.Errorf("covered %.1f s, %d answered, %d timeline points: want the 3 s or so that ran, answered", r.DurationS, r.Requests.OK, len(r.Timeline))
	}
	until(ctx, t, "the run's namespace gone", func() (bool, error) {
		list, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: manifests.ManagedByLabel + "=" + manifests.ManagedBy})
		return err == nil && len(list.Items) == 0, err
	})
}

// A scenario's rollout is started at its time, as kubectl rollout restart starts
// one: the Deployment controller replaces the five pods by its RollingUpdate
// strategy, and the Result's rollout names the five it created and the five it
// deleted, and when every new pod was available.
func TestEngineRollsOutOnTheLocalCluster(t *testing.T) {
	cfg, _ := localcluster.Client(t)
	sc := load(t, "r1-curl-loop.yaml", "spec.duration=25s", "spec.services[0].rollouts=[{at: 3s}]")
	r := runOnLocal(t, cfg, sc, 3*time.Minute)
	if len(r.Rollouts) != 1 {
		t.Fatalf("rollouts %+v: want one", r.Rollouts)
	}
	ro := r.Rollouts[0]
	// The patch is sent at 3 s and answered within a round trip or two.
	if ro.Service != "webapp1" || ro.Strategy != "RollingUpdate" || ro.StartS < 3 || ro.StartS > 4 ||
		len(ro.Created) != 5 || len(ro.Deleted) != 5 || ro.DoneS == nil || *ro.DoneS > 25 || len(r.Pods) != 10 {
		t.Errorf("rollout %+v, %d pods: want webapp1's, started at 3 s, 5 pods created and 5 deleted, done within the run, 10 pods", ro, len(r.Pods))
	}
	// The timeline's ready endpoints are the EndpointSlice's: the five pods'
	// before the rollout, and the five new ones' at the end.
	if first, last := r.Timeline[0], r.Timeline[len(r.Timeline)-1]; first.ReadyEndpoints["webapp1"] != 5 || last.ReadyEndpoints["webapp1"] != 5 {
		t.Errorf("ready endpoints %v first, %v last: want 5 each", first.ReadyEndpoints, last.ReadyEndpoints)
	}
	for _, d := range r.Cluster.Differences {
		if strings.Contains(d, "rollout") {
			t.Errorf("said %q of a rollout it started", d)
		}
	}
	// Without a preStop, each old pod's app exits while the nodes' rules may still
	// send it new connections: R2's refusals, which the fidelity table compares.
	if ro.DoneS != nil {
		t.Logf("done at %.1f s; %d failed: %v", *ro.DoneS, r.Requests.Failed, r.Errors)
	}
}

// A service's calls are counted by the pods that make them: the frontend's pod
// writes its figures to its log when the run ends it, before webapp1's, and the
// Result's edge and webapp1's pods' requests come from them, as emulate's do.
func TestEngineCallsOnTheLocalCluster(t *testing.T) {
	cfg, _ := localcluster.Client(t)
	sc := load(t, "r1-in-cluster.yaml", "spec.duration=10s", "spec.cluster.network.latency=0s",
		"spec.services[0].pod.cpu=200m", "spec.services[1].pod.cpu=200m")
	r := runOnLocal(t, cfg, sc, 3*time.Minute)
	if len(r.Edges) != 1 || r.Edges[0].From != "frontend" || r.Edges[0].To != "webapp1" {
		t.Fatalf("edges %+v: want frontend's calls to webapp1", r.Edges)
	}
	e := r.Edges[0]
	var answered int64
	for _, p := range r.Pods {
		if p.Service == "webapp1" {
			answered += p.Requests
		}
	}
	// Every user request the frontend answered made one call, answered by one of
	// webapp1's pods; none failed. The pods' own counts may add the calls of
	// requests the run's end cut off.
	front := r.Services[0]
	if r.Requests.Failed != 0 || e.Requests < r.Requests.OK || front.Requests < r.Requests.OK || answered != e.Attempts || e.PodsReached < 1 {
		t.Errorf("users got %d answers (%d failed); frontend answered %d; its calls %d (%d attempts, %d pods reached); webapp1's pods answered %d: want the frontend's and its calls' counts at least the users', the calls' attempts webapp1's",
			r.Requests.OK, r.Requests.Failed, front.Requests, e.Requests, e.Attempts, e.PodsReached, answered)
	}
	t.Logf("users %d answers; frontend %d; calls %d, %d pods reached over %d connections", r.Requests.OK, front.Requests, e.Requests, e.PodsReached, e.ConnectionsOpened)
}

// hpaLocal's one pod, limited to 100m and asked for 0.15 cores in the first
// phase, runs at 100 % of its request: the HPA (15 s syncs, metrics-server's 15 s
// readings) scales it out towards 3. The second phase's 45 requests/s need 1 pod,
// and with no stabilization window it scales in at the next sync. Each request
// opens a connection of its own, so kube-proxy picks a pod for each: a pod whose
// app exits while the nodes' rules still list it refuses the connections they send
// it. Without a readiness probe the kubelet calls a new pod ready once its
// container starts, a moment before trafficlab serve listens, so the scale-out's
// new pods may refuse a few connections too, which simulate (ready when the app
// listens) does not predict; they come outside the removals. (A probe here would
// fail under the first phase's overload, and the HPA would set the unready pods'
// CPU aside.)
const hpaLocal = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: hpa-local}
spec:
  duration: 120s
  seed: 1
  cluster: {proxyMode: iptables}
  services:
  - name: api
    replicas: 1
    pod:
      cpu: 100m
      serviceTime: {distribution: constant, value: 1ms}
    autoscaler:
      minReplicas: 1
      maxReplicas: 3
      metrics:
      - type: Resource
        resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
      behavior:
        scaleDown: {stabilizationWindowSeconds: 0}
  clients:
  - name: frontend
    target: api
    library: go-net-http
    connections: {reuse: none}
    phases:
    - {rate: 150/s, duration: 40s}
    - {rate: 45/s, duration: 80s}
`

// The cluster's own HPA scales the Deployment out under load and in after it,
// reading CPU through the local cluster's metrics-server: the Result has the
// scale events with the HPA's reason and the pods each created or deleted, the
// timeline's replicas follow them, and the limited pods have their throttling.
// Simulate predicts that the scale-in's pods, exiting on SIGTERM, refuse the
// connections the nodes' rules still send them (its default endpoint propagation
// is 200 to 500 ms), and that a preStop sleep longer than that prevents it: with
// the sleep, no failure comes while pods are being removed. Without it, the local
// cluster's kube-proxy drops a deleted pod from its rules within milliseconds, most
// often before the kubelet's SIGTERM reaches the app: in the runs made while
// writing this test, from none to 9 refusals came while pods were removed, against
// simulate's 8 to 16. Which comes first varies, so the count is logged, not
// checked. The HPA's scale-in came 20 to 60 s after the load fell (its new pods'
// first readings), hence the second phase's 80 s.
func TestEngineScalesOnTheLocalCluster(t *testing.T) {
	cfg, _ := localcluster.Client(t)
	for _, tc := range []struct {
		name     string
		sets     []string
		failures bool
	}{
		{"exit on SIGTERM", nil, true},
		{"a preStop sleep first", []string{"spec.services[0].pod.lifecycle={preStop: {sleep: {seconds: 5}}}"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // two namespaces, each HPA its own: about 2 minutes, not 4
			sc, _, diags := scenario.Load("hpa-local.yaml", []byte(hpaLocal), tc.sets)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			predicted := simulated(t, sc)
			r := runOnLocal(t, cfg, sc, 5*time.Minute)
			if !r.Cluster.MetricsServer {
				t.Errorf("cluster %+v: want the metrics API found", r.Cluster)
			}
			checkScaling(t, r)
			// Simulate blames the scale-in's pods for its refusals; the cluster's
			// refusals come while they are being removed, which is what the report
			// says of an engine that cannot trace them.
			var blamed int64
			for _, p := range predicted.Pods {
				blamed += p.Errors.Total()
			}
			var text strings.Builder
			if err := report.Text(&text, r); err != nil {
				t.Fatal(err)
			}
			came := strings.Contains(strings.Join(strings.Fields(text.String()), " "), "- came while pods were being removed")
			t.Logf("simulate blames %d failures on removed pods; the cluster's %d failures (%+v) came while pods were removed: %v", blamed, r.Requests.Failed, r.Errors, came)
			if (blamed > 0) != tc.failures || came && !tc.failures {
				t.Errorf("simulate blamed %d failures on removed pods, the cluster's report says failures came while they were removed: %v; want simulate's %v, and none in the cluster with a preStop sleep:\n%s",
					blamed, came, tc.failures, text.String())
			}
		})
	}
}

// checkScaling checks that r scaled out, then in after the load fell at 40 s,
// with the HPA's reasons, the pods each event made or removed, a timeline that
// follows, and the throttling of the pods' 100m limit.
func checkScaling(t *testing.T, r *result.Result) {
	t.Helper()
	var out, in *result.ScaleEvent
	for i, ev := range r.ScaleEvents {
		t.Logf("scale event at %.1f s: %d → %d (%s), created %v, deleted %v", ev.TS, ev.From, ev.To, ev.Reason, ev.Created, ev.Deleted)
		if ev.To > ev.From && out == nil {
			out = &r.ScaleEvents[i]
		}
		if ev.To < ev.From && ev.TS >= 40 && in == nil {
			in = &r.ScaleEvents[i]
		}
	}
	switch {
	case out == nil || in == nil:
		t.Fatalf("scale events %+v: want one out, and one in after the load falls at 40 s", r.ScaleEvents)
	case !strings.Contains(out.Reason, "cpu") || len(out.Created) != out.To-out.From:
		t.Errorf("scale-out %+v: want the HPA's cpu reason and the pods it created", *out)
	case len(in.Deleted) != in.From-in.To:
		t.Errorf("scale-in %+v: want the pods it deleted", *in)
	}
	for _, p := range r.Pods {
		if th := p.Throttling; p.Requests > 1000 && (th == nil || th.Periods == 0) {
			t.Errorf("pod %s answered %d under its limit, throttling %+v: want its CFS periods", p.Name, p.Requests, th)
		}
	}
	most := 0
	for _, p := range r.Timeline {
		most = max(most, p.Replicas["api"])
	}
	if last := r.Timeline[len(r.Timeline)-1].Replicas["api"]; most < 2 || last >= most {
		t.Errorf("replicas at most %d, at the end %d: want the scale-out and the scale-in in the timeline", most, last)
	}
}

// simulated is simulate's Result for sc.
func simulated(t *testing.T, sc *scenario.Scenario) *result.Result {
	t.Helper()
	e, err := simulate.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	e.Run(nil)
	return e.Result()
}

// chiSquare is Pearson's statistic of counts against an even spread of total.
func chiSquare(counts []int64, total int64) float64 {
	e := float64(total) / float64(len(counts))
	x := 0.0
	for _, c := range counts {
		x += (float64(c) - e) * (float64(c) - e) / e
	}
	return x
}
