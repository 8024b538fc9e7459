package scenario

import (
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// nodesBase is a valid scenario whose lines the helpers below replace: the node pool
// on line 7, the pod's placement and resources from line 13, the client's load on
// line 18.
const nodesBase = `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: t}
spec:
  duration: 10s
  cluster:
    nodes: [{name: worker, count: 3}]
  services:
  - name: web
    replicas: 2
    pod:
      serviceTime: {distribution: exponential, mean: 1ms}
      labels: {tier: web}
  clients:
  - name: caller
    target: web
    replicas: 1
    threads: 2
`

func withNodes(pool string) string {
	return strings.Replace(nodesBase, "    nodes: [{name: worker, count: 3}]\n", "    nodes: ["+pool+"]\n", 1)
}

func withPod(line string) string {
	return strings.Replace(nodesBase, "      labels: {tier: web}\n", "      "+line+"\n", 1)
}

func withLoad(line string) string {
	return strings.Replace(nodesBase, "    threads: 2\n", "    "+line+"\n", 1)
}

func withService(line string) string {
	return strings.Replace(nodesBase, "    replicas: 2\n", "    replicas: 2\n    "+line+"\n", 1)
}

func withBackground(item string) string {
	return nodesBase + "  background:\n  - " + item + "\n"
}

func TestLoadNodeKeys(t *testing.T) {
	in := `apiVersion: trafficlab/v1alpha1
kind: Scenario
metadata: {name: r3}
spec:
  duration: 1h
  cluster:
    nodes:
    - name: pool
      count: 3
      cpu: "4"
      disk: {writeBytesPerSecond: 20Mi, iops: 3000}
      labels: {disktype: pd-standard}
      taints: [{key: dedicated, value: batch, effect: PreferNoSchedule}]
  services:
  - name: api
    replicas: 10
    pod:
      resources: {requests: {cpu: 250m, memory: 64Mi}, limits: {cpu: "1"}}
      serviceTime: {distribution: exponential, mean: 1ms}
      accessLog: {bytes: 300, cpu: 20us}
      nodeSelector: {disktype: pd-standard}
      tolerations: [{key: dedicated, operator: Exists}]
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {app: writer}}
            topologyKey: kubernetes.io/hostname
  clients:
  - name: load
    target: api
    rateCurve: {diurnal: {min: 1000/s, max: 3000/s, peakAt: 2h}}
  background:
  - name: writer
    node: pool-1
    diskWriteBytesPerSecond: 18Mi
    cpu: 500m
    schedule: {bursts: {every: 10m, length: 1m}}
  report: {slowThreshold: 250ms}
`
	sc, _, diags := Load("f.yaml", []byte(in), nil)
	if diags.HasErrors() || len(diags) > 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	pool := sc.Spec.Cluster.Nodes[0]
	if pool.Disk.WriteBytesPerSecond.Value() != 20<<20 || pool.Disk.IOPS != 3000 || pool.Labels["disktype"] != "pd-standard" ||
		pool.Taints[0].Effect != corev1.TaintEffectPreferNoSchedule {
		t.Errorf("pool %+v", pool)
	}
	pod := sc.Spec.Services[0].Pod
	// The limit is the pod's cpu; the request stays as written.
	if pod.CPU.String() != "1" || pod.Resources.Requests.Cpu().String() != "250m" {
		t.Errorf("cpu limit %v, request %v; want 1 and 250m", pod.CPU, pod.Resources.Requests.Cpu())
	}
	if *pod.AccessLog.Bytes != 300 || !*pod.AccessLog.Sync || pod.AccessLog.BufferBytes != nil || pod.AccessLog.CPU.Duration != 20*time.Microsecond {
		t.Errorf("access log %+v", pod.AccessLog)
	}
	term := pod.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
	if term.TopologyKey != "kubernetes.io/hostname" || term.LabelSelector.MatchLabels["app"] != "writer" {
		t.Errorf("anti-affinity %+v", term)
	}
	if pod.Tolerations[0].Operator != corev1.TolerationOpExists {
		t.Errorf("tolerations %+v", pod.Tolerations)
	}
	d := sc.Spec.Clients[0].RateCurve.Diurnal
	if d.Min.PerSecond != 1000 || d.Max.PerSecond != 3000 || d.Period.Duration != 24*time.Hour || d.PeakAt.Duration != 2*time.Hour {
		t.Errorf("diurnal %+v", d)
	}
	b := sc.Spec.Background[0]
	if b.Node != "pool-1" || *b.DiskWriteChunkBytes != 1<<20 || *b.DiskIOBytes != 0 || b.Schedule.Bursts.Every.Duration != 10*time.Minute {
		t.Errorf("background %+v", b)
	}
	if sc.Spec.Report.SlowThreshold.Duration != 250*time.Millisecond {
		t.Errorf("slow threshold %v", sc.Spec.Report.SlowThreshold)
	}
}

// The API server defaults a request to the limit (SetDefaults_Pod); the cpu
// shorthand is the limit.
func TestResourceDefaults(t *testing.T) {
	cases := []struct {
		name, line string
		limit, req string // "" = unset
	}{
		{"cpu shorthand", `cpu: 500m`, "500m", "500m"},
		{"limit only", `resources: {limits: {cpu: "2"}}`, "2", "2"},
		{"request only", `resources: {requests: {cpu: 100m}}`, "", "100m"},
		{"both", `resources: {requests: {cpu: 100m}, limits: {cpu: "1"}}`, "1", "100m"},
		{"neither", `labels: {a: b}`, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc, _, diags := Load("f.yaml", []byte(withPod(tc.line)), nil)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			pod := sc.Spec.Services[0].Pod
			limit, req := "", ""
			if pod.CPU != nil {
				limit = pod.CPU.String()
			}
			if q, ok := pod.Resources.Requests[corev1.ResourceCPU]; ok {
				req = q.String()
			}
			if limit != tc.limit || req != tc.req {
				t.Errorf("limit %q request %q, want %q %q", limit, req, tc.limit, tc.req)
			}
		})
	}
}

// nodeErrorCases are bad input; FuzzLoad starts from them too.
var nodeErrorCases = []struct {
	name, in string
	want     string // every diagnostic, one per line
}{
	{"negative disk throughput", withNodes("{name: w, count: 1, disk: {writeBytesPerSecond: -1Mi}}"),
		"f.yaml:7:61: spec.cluster.nodes[0].disk.writeBytesPerSecond: negative quantity -1Mi"},
	{"zero disk throughput", withNodes("{name: w, count: 1, disk: {writeBytesPerSecond: 0}}"),
		"f.yaml:7:61: spec.cluster.nodes[0].disk.writeBytesPerSecond: must be greater than 0; leave it out for unlimited"},
	{"taint without effect", withNodes("{name: w, count: 1, taints: [{key: a}]}"),
		"f.yaml:7:42: spec.cluster.nodes[0].taints[0].effect: is required; valid: NoSchedule, PreferNoSchedule, NoExecute"},
	{"taint bad effect", withNodes("{name: w, count: 1, taints: [{key: a, effect: Never}]}"),
		`f.yaml:7:59: spec.cluster.nodes[0].taints[0].effect: unknown taint effect "Never"; valid: NoSchedule, PreferNoSchedule, NoExecute`},
	{"bad label", withNodes("{name: w, count: 1, labels: {a b: c}}"),
		`f.yaml:7:41: spec.cluster.nodes[0].labels: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`},
	{"cpu twice", withPod(`cpu: "1"` + "\n      resources: {limits: {cpu: \"2\"}}"),
		"f.yaml:13:12: spec.services[0].pod.cpu: is the cpu limit, also set as resources.limits.cpu; set one"},
	{"request above limit", withPod(`resources: {requests: {cpu: "2"}, limits: {cpu: "1"}}`),
		"f.yaml:13:35: spec.services[0].pod.resources.requests.cpu: must be less than or equal to the cpu limit (1)"},
	{"gpu", withPod(`resources: {limits: {nvidia.com/gpu: "1"}}`),
		"f.yaml:13:44: warning: spec.services[0].pod.resources.limits.nvidia.com/gpu: trafficlab models only cpu and memory; ignored"},
	{"unknown node", withPod(`nodeName: worker-3`),
		`f.yaml:13:17: spec.services[0].pod.nodeName: no node named "worker-3"; did you mean "worker-0"?`},
	{"toleration Exists with value", withPod(`tolerations: [{key: a, operator: Exists, value: b}]`),
		"f.yaml:13:55: spec.services[0].pod.tolerations[0].value: must be empty when operator is Exists"},
	{"anti-affinity without topology key", withPod(`affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: x}}}]}}`),
		"f.yaml:13:85: spec.services[0].pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: is required, e.g. kubernetes.io/hostname"},
	{"node affinity In without values", withPod(`affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: In}]}]}}}`),
		"f.yaml:13:122: spec.services[0].pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: must be specified when operator is In or NotIn"},
	{"bad selector operator, reported once", withPod(`affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: h, labelSelector: {matchExpressions: [{key: app, operator: Foo, values: [x]}]}}]}}`),
		`f.yaml:13:154: spec.services[0].pod.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].operator: Invalid value: "Foo": not a valid selector operator`},
	{"spread without maxSkew", withPod(`topologySpreadConstraints: [{topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}]`),
		"f.yaml:13:35: spec.services[0].pod.topologySpreadConstraints[0].maxSkew: must be at least 1"},
	{"spread action", withPod(`topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Never}]`),
		`f.yaml:13:86: spec.services[0].pod.topologySpreadConstraints[0].whenUnsatisfiable: unknown action "Never"; valid: DoNotSchedule, ScheduleAnyway`},
	{"spread minDomains when soft", withPod(`topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}]`),
		"f.yaml:13:114: spec.services[0].pod.topologySpreadConstraints[0].minDomains: applies only with whenUnsatisfiable DoNotSchedule"},
	{"spread twice", withPod(`topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}, {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]`),
		"f.yaml:13:102: spec.services[0].pod.topologySpreadConstraints[1]: repeats the topologyKey and whenUnsatisfiable of spec.services[0].pod.topologySpreadConstraints[0]"},
	{"preferred weight", withPod(`affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 0, podAffinityTerm: {topologyKey: h}}]}}`),
		"f.yaml:13:95: spec.services[0].pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: must be from 1 to 100"},
	{"empty access log line", withPod(`accessLog: {bytes: 0}`),
		"f.yaml:13:26: spec.services[0].pod.accessLog.bytes: must be greater than 0"},
	{"buffer with sync", withPod(`accessLog: {bufferBytes: 64Ki}`),
		"f.yaml:13:32: spec.services[0].pod.accessLog.bufferBytes: applies only with sync: false"},
	{"rate curve and threads", withLoad("threads: 2\n    rateCurve: {points: [{at: 0s, rate: 10/s}]}"),
		"f.yaml:18:14: spec.clients[0].threads: cannot be set with rateCurve, which sets the rate over the whole run"},
	{"rate curve points out of order", withLoad("rateCurve: {points: [{at: 5s, rate: 10/s}, {at: 1s, rate: 20/s}]}"),
		"f.yaml:18:53: spec.clients[0].rateCurve.points[1].at: must be later than the point before it (5s)"},
	{"rate curve empty", withLoad("rateCurve: {}"),
		"f.yaml:18:16: spec.clients[0].rateCurve: needs points or diurnal"},
	{"diurnal max below min", withLoad("rateCurve: {diurnal: {min: 10/s, max: 5/s}}"),
		"f.yaml:18:43: spec.clients[0].rateCurve.diurnal.max: must not be below min (10/s)"},
	{"background without work", withBackground("{name: idle, node: worker-0}"),
		"f.yaml:20:5: spec.background[0]: needs cpu (cores to burn), diskWriteBytesPerSecond, or both"},
	{"background node and placement", withBackground("{name: w, node: worker-0, placement: {}, cpu: 1}"),
		"f.yaml:20:42: spec.background[0].placement: cannot be set with node: node pins the pod, placement lets the scheduler choose; set one"},
	{"background unknown node", withBackground("{name: w, node: wrker-0, cpu: 1}"),
		`f.yaml:20:21: spec.background[0].node: no node named "wrker-0"; did you mean "worker-0"?`},
	{"bursts longer than period", withBackground("{name: w, cpu: 1, schedule: {bursts: {every: 1m, length: 2m}}}"),
		"f.yaml:20:62: spec.background[0].schedule.bursts.length: must not be longer than every (1m0s)"},
	{"diurnal factor above 1", withBackground("{name: w, cpu: 1, schedule: {diurnal: {min: 0.5, max: 2}}}"),
		"f.yaml:20:59: spec.background[0].schedule.diurnal.max: must be from min (0.5) to 1"},
	{"node bandwidth zero", withNodes("{name: w, count: 1, bandwidth: 0mbit}"),
		`f.yaml:7:44: spec.cluster.nodes[0].bandwidth: invalid bandwidth "0mbit": must be greater than 0`},
	{"strategy type", withService("strategy: {type: BlueGreen}"),
		`f.yaml:11:22: spec.services[0].strategy.type: unknown strategy type "BlueGreen"; valid: RollingUpdate, Recreate`},
	{"recreate with rollingUpdate", withService("strategy: {type: Recreate, rollingUpdate: {maxSurge: 1}}"),
		"f.yaml:11:47: spec.services[0].strategy.rollingUpdate: may not be specified when strategy `type` is 'Recreate'"},
	{"surge and unavailable zero", withService("strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 0%}}"),
		"f.yaml:11:61: spec.services[0].strategy.rollingUpdate.maxUnavailable: may not be 0 when `maxSurge` is 0"},
	{"bad percent", withService("strategy: {rollingUpdate: {maxSurge: 25 %}}"),
		"f.yaml:11:42: spec.services[0].strategy.rollingUpdate.maxSurge: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"},
	{"unavailable over 100%", withService("strategy: {rollingUpdate: {maxUnavailable: 120%}}"),
		"f.yaml:11:48: spec.services[0].strategy.rollingUpdate.maxUnavailable: must not be greater than 100%"},
	{"negative surge", withService("strategy: {rollingUpdate: {maxSurge: -1}}"),
		"f.yaml:11:42: spec.services[0].strategy.rollingUpdate.maxSurge: must be greater than or equal to 0"},
	{"surge as a list", withService("strategy: {rollingUpdate: {maxSurge: [1]}}"),
		`f.yaml:11:42: spec.services[0].strategy.rollingUpdate.maxSurge: expected a number or a percentage such as "25%", got a list`},
	{"rollout without at", withService("rollouts: [{}]"),
		"f.yaml:11:16: spec.services[0].rollouts[0].at: is required: when the rollout starts, e.g. 10m"},
	{"rollouts out of order", withService("rollouts: [{at: 5s}, {at: 2s}]"),
		"f.yaml:11:31: spec.services[0].rollouts[1].at: is before rollouts[0] (5s): list rollouts in time order"},
	{"rollout after the end", withService("rollouts: [{at: 1m}]"),
		"f.yaml:11:21: warning: spec.services[0].rollouts[0].at: is at or after the end of the run (spec.duration 10s): this rollout never starts"},
	{"negative minReadySeconds", withService("minReadySeconds: -1"),
		"f.yaml:11:22: spec.services[0].minReadySeconds: must be greater than or equal to 0"},
	{"slow threshold zero", nodesBase + "  report: {slowThreshold: 0s}\n",
		"f.yaml:19:27: spec.report.slowThreshold: must be greater than 0"},
}

func TestLoadNodeErrors(t *testing.T) {
	cases := nodeErrorCases
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, diags := Load("f.yaml", []byte(tc.in), nil)
			if got := diags.Error(); got != tc.want {
				t.Errorf("diagnostics:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestNodeBaseLoads(t *testing.T) {
	sc, _, diags := Load("f.yaml", []byte(nodesBase), nil)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	if !reflect.DeepEqual(sc.Spec.Services[0].Pod.Labels, map[string]string{"tier": "web"}) {
		t.Errorf("labels %v", sc.Spec.Services[0].Pod.Labels)
	}
}

// maxSurge and maxUnavailable read as Kubernetes reads them: a YAML number is a count,
// a string a percentage; the unset one takes the 25 % default.
func TestStrategyDecodes(t *testing.T) {
	one, zero, quarter, half := intstr.FromInt32(1), intstr.FromInt32(0), intstr.FromString("25%"), intstr.FromString("50%")
	cases := []struct {
		line string
		want appsv1.DeploymentStrategy
	}{
		{"minReadySeconds: 0", rollingUpdate(&quarter, &quarter)},
		{"strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}", rollingUpdate(&one, &zero)},
		{`strategy: {rollingUpdate: {maxSurge: "50%"}}`, rollingUpdate(&half, &quarter)},
		{"strategy: {type: Recreate}", appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}},
	}
	for _, tc := range cases {
		sc, _, diags := Load("f.yaml", []byte(withService(tc.line)), nil)
		if len(diags) > 0 {
			t.Fatalf("%s: %v", tc.line, diags)
		}
		if got := sc.Spec.Services[0].Strategy; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.line, got, tc.want)
		}
	}
}

func rollingUpdate(surge, unavailable *intstr.IntOrString) appsv1.DeploymentStrategy {
	return appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: surge, MaxUnavailable: unavailable}}
}
