// Package cluster is the cluster engine (issue 22, in progress): a scenario run on a
// real Kubernetes cluster. This file releases a run's load pods and reads what they
// measured; cluster/manifests makes the objects they run in.
package cluster

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
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

// Report reads a finished load pod's log: the JSON lines `trafficlab load --stream`
// wrote on stdout, its report last. The log holds its stderr too (the ready line),
// which is not JSON and is left out.
func Report(ctx context.Context, cs kubernetes.Interface, ns, pod string) (*load.Report, error) {
	raw, err := cs.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: "load"}).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("the log of %s: %w", pod, err)
	}
	var stream bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if line := sc.Bytes(); len(line) > 0 && line[0] == '{' {
			stream.Write(line)
			stream.WriteByte('\n')
		}
	}
	return load.ReadStream(&stream, func(int64, *hdr.Histogram) {})
}
