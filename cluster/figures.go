package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"trafficlab/emulate/serve"
)

// Services that call services: the load pods see only the services they call,
// so each service pod writes what it did, its calls and which pods answered them,
// to its log when it exits (serve --figures -). The engine follows every service
// pod's log from when its app runs, so that a pod the run removes is counted too,
// and at the end ends the services, callers first (as emulate does), and adds the
// figures up as emulate does. A pod whose log ends without them (killed) is left
// out.

// figuresWait bounds the wait for the services' pods to exit and write their
// figures at the end: a SIGTERM and, for a pod with a preStop hook, the hook.
const figuresWait = 45 * time.Second

// figures follows service pods' logs for their figures.
type figures struct {
	cs     kubernetes.Interface
	ns     string
	ctx    context.Context // every log's stream ends with it
	cancel context.CancelFunc
	mu     sync.Mutex
	logs   map[string]*podLog // by pod name
}

// podLog is one service pod's log being followed.
type podLog struct {
	service string
	ended   chan struct{} // closed when the log ends
	figures *serve.Figures
}

func newFigures(cs kubernetes.Interface, ns string, lasts time.Duration) *figures {
	ctx, cancel := context.WithTimeout(context.Background(), lasts)
	return &figures{cs: cs, ns: ns, ctx: ctx, cancel: cancel, logs: map[string]*podLog{}}
}

// follow starts following pod's log, unless it is followed already.
func (f *figures) follow(pod, service string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.logs[pod] != nil {
		return
	}
	l := &podLog{service: service, ended: make(chan struct{})}
	f.logs[pod] = l
	go func() {
		defer close(l.ended)
		logs, err := f.cs.CoreV1().Pods(f.ns).GetLogs(pod, &corev1.PodLogOptions{Container: "app", Follow: true}).Stream(f.ctx)
		if err != nil {
			return
		}
		defer logs.Close()
		sc := bufio.NewScanner(logs)
		sc.Buffer(nil, 16<<20) // one line, with histograms
		for sc.Scan() {
			rest, ok := strings.CutPrefix(sc.Text(), serve.FiguresLine)
			var fig serve.Figures
			if ok && json.Unmarshal([]byte(rest), &fig) == nil {
				f.mu.Lock()
				l.figures = &fig
				f.mu.Unlock()
			}
		}
	}()
}

// all are the figures the pods wrote.
func (f *figures) all() []serve.Figures {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []serve.Figures
	for _, l := range f.logs {
		if l.figures != nil {
			out = append(out, *l.figures)
		}
	}
	slices.SortFunc(out, func(a, b serve.Figures) int { return strings.Compare(a.Pod, b.Pod) })
	return out
}

// endServices scales the services' Deployments to 0, callers first, and waits
// for each level's pods' logs to end before the next, within figuresWait. An
// HPA leaves a Deployment at 0 replicas alone.
func (e *engine) endServices() {
	deadline := time.After(figuresWait)
	level := e.sc.CallLevels()
	last := 0
	for _, l := range level {
		last = max(last, l)
	}
	zero := []byte(`{"spec":{"replicas":0}}`)
	for l := 0; l <= last; l++ {
		var services []string
		for _, s := range e.sc.Spec.Services {
			if level[s.Name] == l {
				services = append(services, s.Name)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, err := e.cs.AppsV1().Deployments(e.ns).Patch(ctx, s.Name, types.StrategicMergePatchType, zero, metav1.PatchOptions{})
				cancel()
				if err != nil {
					fmt.Fprintf(e.o.Log, "cluster: ending service %s for its pods' figures: %v\n", s.Name, err)
				}
			}
		}
		e.figs.mu.Lock()
		var ending []chan struct{}
		for _, pl := range e.figs.logs {
			if slices.Contains(services, pl.service) {
				ending = append(ending, pl.ended)
			}
		}
		e.figs.mu.Unlock()
		for _, ended := range ending {
			select {
			case <-ended:
			case <-deadline:
				fmt.Fprintf(e.o.Log, "cluster: waited %v for the service pods' figures; those not written are left out\n", figuresWait)
				return
			}
		}
	}
}
