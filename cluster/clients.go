// Package cluster is the cluster engine: a scenario run on a real Kubernetes
// cluster, its Result filled as simulate's. cluster/manifests makes the objects a
// run applies; this file releases its load pods and follows what they measure.
package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"

	"trafficlab/emulate/load"
)

// Release sends each load pod of namespace ns the run's start time at, on its
// stdin (pods/attach), as emulate sends each client process its own: load pods
// that started seconds apart all begin together.
func Release(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface, ns string, pods []string, at time.Time) error {
	for _, pod := range pods {
		req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("attach").
			VersionedParams(&corev1.PodAttachOptions{Container: "load", Stdin: true}, scheme.ParameterCodec)
		exec, err := remotecommand.NewSPDYExecutor(cfg, "POST", req.URL())
		if err != nil {
			return fmt.Errorf("attaching to %s: %w", pod, err)
		}
		if err := exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: strings.NewReader(fmt.Sprintf("%d\n", at.UnixNano()))}); err != nil {
			return fmt.Errorf("sending %s its start time: %w", pod, err)
		}
	}
	return nil
}

// Follow follows a load pod's log from its start until the pod's load ends: the
// JSON lines `trafficlab load --stream` writes on stdout, each interval to
// onInterval, its report last. The log holds its stderr too (the ready line),
// which is not JSON and is left out.
func Follow(ctx context.Context, cs kubernetes.Interface, ns, pod string, onInterval func(int64, *hdr.Histogram)) (*load.Report, error) {
	logs, err := cs.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: "load", Follow: true}).Stream(ctx)
	if err != nil {
		return nil, fmt.Errorf("the log of %s: %w", pod, err)
	}
	defer logs.Close()
	r, w := io.Pipe()
	go func() {
		sc := bufio.NewScanner(logs)
		sc.Buffer(nil, 64<<20) // a report with many pods and a long timeline is one line
		for sc.Scan() {
			if line := sc.Bytes(); len(line) > 0 && line[0] == '{' {
				if _, err := w.Write(append(line, '\n')); err != nil {
					return
				}
			}
		}
		w.CloseWithError(sc.Err())
	}()
	defer r.Close()
	return load.ReadStream(r, onInterval)
}
