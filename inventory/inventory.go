// Package inventory reads the Kubernetes objects a user's system is written in:
// manifest files (multi-document YAML, JSON, `kubectl get -o yaml` Lists, the
// output of kustomize build or helm template) into typed objects, each with the
// file and line it came from. It keeps the kinds an import reads (Deployments,
// StatefulSets, Jobs, Services, HPAs, PDBs, Nodes, ConfigMaps, Namespaces and Istio's
// DestinationRules) and lists every other object, so that nothing is dropped
// without a word.
package inventory

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// Source is where an object was read: a file (or "-" for stdin) and the line its
// document starts on; Item is its place in a List, from 0, or -1. An object read
// from a cluster has the cluster's name for File and no line.
type Source struct {
	File string
	Line int
	Item int
}

func (s Source) String() string {
	if s.Line == 0 {
		return s.File // read from a cluster
	}
	if s.Item >= 0 {
		return fmt.Sprintf("%s:%d: items[%d]", s.File, s.Line, s.Item)
	}
	return fmt.Sprintf("%s:%d", s.File, s.Line)
}

// Object is one object read, typed, with where it came from.
type Object[T any] struct {
	Object T
	Source Source
}

// Other is an object of a kind the inventory does not keep.
type Other struct {
	APIVersion, Kind, Namespace, Name string
	Source                            Source
}

// Inventory is the objects read, in the order read.
type Inventory struct {
	Deployments  []Object[*appsv1.Deployment]
	StatefulSets []Object[*appsv1.StatefulSet]
	// Jobs run pods that call Services, such as a load test's generator.
	Jobs     []Object[*batchv1.Job]
	Services []Object[*corev1.Service]
	// HPAs are autoscaling/v2's; an autoscaling/v1 one is converted, its target
	// CPU utilization becoming a Resource metric, as the API server converts it.
	HPAs       []Object[*autoscalingv2.HorizontalPodAutoscaler]
	PDBs       []Object[*policyv1.PodDisruptionBudget]
	Nodes      []Object[*corev1.Node]
	ConfigMaps []Object[*corev1.ConfigMap]
	// Namespaces carry Istio's injection label.
	Namespaces       []Object[*corev1.Namespace]
	DestinationRules []Object[*DestinationRule]
	Others           []Other
	// Unread are the cluster-wide reads a cluster forbade, each with its error,
	// and the files of a directory that hold no Kubernetes object (a chart's
	// values.yaml, a template before helm renders it), each with why.
	Unread []string
}

// ReadPath reads a file, or every .yaml, .yml and .json file under a directory
// in lexical order, into inv. A file of a directory that is no manifest is
// skipped and recorded in Unread; a file named alone must be one.
func (inv *Inventory) ReadPath(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return inv.readFile(path)
	}
	return filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if ext := filepath.Ext(p); ext != ".yaml" && ext != ".yml" && ext != ".json" {
			return nil
		}
		var part Inventory
		if err := part.readFile(p); err != nil {
			var not notManifest
			if !errors.As(err, &not) {
				return err
			}
			inv.Unread = append(inv.Unread, err.Error())
			return nil
		}
		inv.merge(&part)
		return nil
	})
}

// merge appends what other read, list by list: every field of an Inventory is
// a list, so a kind added to it is merged without a line here.
func (inv *Inventory) merge(other *Inventory) {
	to, from := reflect.ValueOf(inv).Elem(), reflect.ValueOf(other).Elem()
	for i := range to.NumField() {
		to.Field(i).Set(reflect.AppendSlice(to.Field(i), from.Field(i)))
	}
}

// notManifest is a file that holds no Kubernetes object: YAML that does not
// parse (a Helm template), or documents without apiVersion and kind.
type notManifest struct{ error }

func (n notManifest) Unwrap() error { return n.error }

// templateHint is what to do with a file that looks like a Helm template.
const templateHint = " (a Helm template? give `helm template` output: helm template CHART | trafficlab import -f -)"

func (inv *Inventory) readFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return inv.Read(path, f)
}

// Read reads the documents of r, named name in errors and sources, into inv.
func (inv *Inventory) Read(name string, r io.Reader) error {
	docs, err := documents(r)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for _, d := range docs {
		src := Source{File: name, Line: d.line, Item: -1}
		data, err := yaml.YAMLToJSON(d.text)
		if err != nil {
			err = fmt.Errorf("%s: %w", src, err)
			if bytes.Contains(d.text, []byte("{{")) {
				err = fmt.Errorf("%w%s", err, templateHint)
			}
			return notManifest{err}
		}
		if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
			continue // only comments
		}
		if err := inv.add(data, src); err != nil {
			if bytes.Contains(d.text, []byte("{{")) {
				return notManifest{fmt.Errorf("%w%s", err, templateHint)}
			}
			return err
		}
	}
	return nil
}

// add decodes one object, or each item of a List, into inv.
func (inv *Inventory) add(data []byte, src Source) error {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name, Namespace string
		} `json:"metadata"`
		Items []runtime.RawExtension `json:"items"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	if head.Kind == "" || head.APIVersion == "" {
		return notManifest{fmt.Errorf("%s: not a Kubernetes object: no apiVersion and kind", src)}
	}
	if strings.HasSuffix(head.Kind, "List") && src.Item < 0 {
		for i, item := range head.Items {
			if err := inv.add(item.Raw, Source{File: src.File, Line: src.Line, Item: i}); err != nil {
				return err
			}
		}
		return nil
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil && !runtime.IsNotRegisteredError(err) {
		return fmt.Errorf("%s: %s %s: %w", src, head.Kind, head.Metadata.Name, err)
	}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		keep(&inv.Deployments, o, src)
	case *appsv1.StatefulSet:
		keep(&inv.StatefulSets, o, src)
	case *batchv1.Job:
		keep(&inv.Jobs, o, src)
	case *corev1.Service:
		keep(&inv.Services, o, src)
	case *autoscalingv2.HorizontalPodAutoscaler:
		keep(&inv.HPAs, o, src)
	case *autoscalingv1.HorizontalPodAutoscaler:
		keep(&inv.HPAs, hpaV2(o), src)
	case *policyv1.PodDisruptionBudget:
		keep(&inv.PDBs, o, src)
	case *corev1.Node:
		keep(&inv.Nodes, o, src)
	case *corev1.ConfigMap:
		keep(&inv.ConfigMaps, o, src)
	case *corev1.Namespace:
		keep(&inv.Namespaces, o, src)
	case nil:
		if !strings.HasPrefix(head.APIVersion, istioNetworking) || head.Kind != "DestinationRule" {
			inv.other(head.APIVersion, head.Kind, head.Metadata.Namespace, head.Metadata.Name, src)
			break
		}
		var dr DestinationRule
		if err := yaml.Unmarshal(data, &dr); err != nil {
			return fmt.Errorf("%s: %s %s: %w", src, head.Kind, head.Metadata.Name, err)
		}
		keep(&inv.DestinationRules, &dr, src)
	default:
		inv.other(head.APIVersion, head.Kind, head.Metadata.Namespace, head.Metadata.Name, src)
	}
	return nil
}

func (inv *Inventory) other(apiVersion, kind, namespace, name string, src Source) {
	inv.Others = append(inv.Others, Other{APIVersion: apiVersion, Kind: kind, Namespace: namespace, Name: name, Source: src})
}

// keep adds o, read at src, to list.
func keep[T any](list *[]Object[T], o T, src Source) { *list = append(*list, Object[T]{o, src}) }

// hpaV2 is an autoscaling/v1 HPA in autoscaling/v2's terms: its target CPU
// utilization a Resource metric of cpu, as the API server's conversion makes it
// (pkg/apis/autoscaling/v1/conversion.go); without one, none, which the HPA
// controller takes as 80 %.
func hpaV2(h *autoscalingv1.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	out := &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   h.TypeMeta,
		ObjectMeta: h.ObjectMeta,
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: h.Spec.ScaleTargetRef.Kind, Name: h.Spec.ScaleTargetRef.Name, APIVersion: h.Spec.ScaleTargetRef.APIVersion},
			MinReplicas:    h.Spec.MinReplicas,
			MaxReplicas:    h.Spec.MaxReplicas,
		},
	}
	out.APIVersion = "autoscaling/v2"
	if u := h.Spec.TargetCPUUtilizationPercentage; u != nil {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: u}}}}
	}
	return out
}

// document is one YAML document and the line it starts on.
type document struct {
	text []byte
	line int
}

// documents splits r at YAML's document markers, a line "---" (with an optional
// comment), keeping the line each document starts on. A JSON file is one document.
func documents(r io.Reader) ([]document, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	var out []document
	cur := document{line: 1}
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if marker(line) {
			out = append(out, cur)
			cur = document{line: n + 1}
			continue
		}
		cur.text = append(append(cur.text, line...), '\n')
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out = append(out, cur)
	return slices.DeleteFunc(out, func(d document) bool { return len(bytes.TrimSpace(d.text)) == 0 }), nil
}

func marker(line string) bool {
	rest, ok := strings.CutPrefix(line, "---")
	rest = strings.TrimSpace(rest)
	return ok && (rest == "" || strings.HasPrefix(rest, "#"))
}
