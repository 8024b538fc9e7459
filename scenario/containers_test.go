package scenario

import (
	"strings"
	"testing"
	"time"
)

// manifestPod is a service written as a manifest writes its pod and HPA: a
// container list with the app and Istio's proxy, a probe handler, an exec
// hook and a scaleTargetRef.
const manifestPod = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: t}
spec:
  duration: 10s
  services:
  - name: web
    replicas: 2
    pod:
      containers:
      - name: server
        image: shop/web:1.4
        ports: [{containerPort: 8080}]
        resources: {requests: {cpu: 250m}, limits: {cpu: "1"}}
        readinessProbe:
          httpGet: {path: /ready, port: 8080}
          periodSeconds: 5
        lifecycle:
          preStop:
            exec: {command: [sh, -c, "sleep 5"]}
      - name: istio-proxy
        image: istio/proxyv2:1.24
      serviceTime: {distribution: exponential, mean: 1ms}
    autoscaler:
      scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
      maxReplicas: 4
  clients:
  - name: caller
    target: web
    threads: 2
`

// The app container's resources, probe timing and hook are the pod's, the
// handler and scaleTargetRef are accepted, and the proxy container is warned
// about.
func TestLoadManifestPod(t *testing.T) {
	sc, _, diags := Load("f.yaml", []byte(manifestPod), nil)
	if sc == nil {
		t.Fatal(diags)
	}
	if len(diags) != 1 || !strings.Contains(diags[0].Error(), "f.yaml:21:9: warning: spec.services[0].pod.containers[1]: istio-proxy: a mesh's proxy is modelled by the service's sidecar key") {
		t.Errorf("diagnostics %v, want the proxy's warning alone", diags)
	}
	p := sc.Spec.Services[0].Pod
	if p.Resources.Requests.Cpu().String() != "250m" || p.CPU.String() != "1" {
		t.Errorf("resources %+v, cpu %v", p.Resources, p.CPU)
	}
	if r := p.ReadinessProbe; r == nil || *r.PeriodSeconds != 5 || *r.FailureThreshold != 3 || r.HTTPGet == nil || r.HTTPGet.Path != "/ready" {
		t.Errorf("probe %+v", p.ReadinessProbe)
	}
	if h := p.Lifecycle.PreStop.Exec; h == nil || h.Duration.Duration != 5*time.Second {
		t.Errorf("preStop %+v", p.Lifecycle.PreStop)
	}
}

// What a container list cannot say.
func TestLoadManifestPodErrors(t *testing.T) {
	for _, tc := range []struct{ name, old, new, want string }{
		{"two apps", "      - name: istio-proxy\n", "      - name: log-shipper\n",
			"f.yaml:11:7: spec.services[0].pod.containers: containers server and log-shipper could each be the app: name it with app"},
		{"app names none", "      containers:\n", "      app: web\n      containers:\n",
			"f.yaml:10:12: spec.services[0].pod.app: names no container of containers"},
		{"cpu limit twice", "      containers:\n", "      cpu: \"2\"\n      containers:\n",
			"spec.services[0].pod.cpu: is set in the app container too (spec.services[0].pod.containers[0].resources.limits.cpu): set it in one place"},
		{"resources twice", "      containers:\n", "      resources: {requests: {cpu: 100m}}\n      containers:\n",
			"f.yaml:10:18: spec.services[0].pod.resources: is set in the app container too (spec.services[0].pod.containers[0].resources): set it in one place"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := strings.Replace(manifestPod, tc.old, tc.new, 1)
			_, _, diags := Load("f.yaml", []byte(doc), nil)
			if got := diags.Error(); !strings.Contains(got, tc.want) {
				t.Errorf("diagnostics:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	_, _, diags := Load("f.yaml", []byte(edit(t, "    pod:\n", "    pod:\n      app: server\n")), nil)
	if want := "f.yaml:10:12: spec.services[0].pod.app: names the app container, with containers only"; !strings.Contains(diags.Error(), want) {
		t.Errorf("app without containers: %v, want %q", diags, want)
	}
}
