package importer

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	sigsyaml "sigs.k8s.io/yaml"

	"trafficlab/inventory"
	"trafficlab/model/kubeproxy"
)

// kubeProxyConfigMap is the ConfigMap kubeadm keeps kube-proxy's
// KubeProxyConfiguration in, in kube-system.
const kubeProxyConfigMap = "kube-proxy"

// cluster is the scenario's cluster: node pools from the Nodes, kube-proxy's
// mode and sync period from its ConfigMap.
func (im *importer) cluster() mapping {
	cluster := newMapping()
	im.kubeProxy(cluster)
	if pools := im.pools(); pools != nil {
		cluster.set("nodes", pools)
	} else {
		cluster.set("nodes", compact(sequence(compact(newMapping().set("name", str("worker")).set("count", integer(3)).set("cpu", str("4")).node))),
			"ASSUMED: no Nodes were read. Import `kubectl get nodes -o yaml` too for the",
			"cluster's own pools, their allocatable CPU, labels and taints.")
	}
	return cluster
}

// kubeProxyConfiguration is what a run reads of kube-proxy's configuration
// (k8s.io/kube-proxy/config/v1alpha1 KubeProxyConfiguration).
type kubeProxyConfiguration struct {
	Mode     string `json:"mode"`
	IPTables struct {
		MinSyncPeriod string `json:"minSyncPeriod"`
	} `json:"iptables"`
	NFTables struct {
		MinSyncPeriod string `json:"minSyncPeriod"`
	} `json:"nftables"`
	IPVS struct {
		Scheduler     string `json:"scheduler"`
		MinSyncPeriod string `json:"minSyncPeriod"`
	} `json:"ipvs"`
}

// kubeProxy sets the proxy mode, the IPVS scheduler and the minimum sync
// period from kube-proxy's ConfigMap.
func (im *importer) kubeProxy(cluster mapping) {
	for _, cm := range im.inv.ConfigMaps {
		if cm.Object.Name != kubeProxyConfigMap || cm.Object.Namespace != "kube-system" {
			continue
		}
		for _, key := range sortedKeys(cm.Object.Data) {
			text := cm.Object.Data[key]
			if !strings.Contains(text, "KubeProxyConfiguration") && !strings.Contains(text, "mode:") {
				continue
			}
			var cfg kubeProxyConfiguration
			if err := sigsyaml.Unmarshal([]byte(text), &cfg); err != nil {
				im.note(cm.Source, "ConfigMap kube-proxy", "its %s does not read: %v", key, err)
				return
			}
			mode := kubeproxy.Parse(cfg.Mode)
			from := fmt.Sprintf("from ConfigMap kube-proxy, %s", key)
			switch {
			case cfg.Mode == "":
			case !mode.Known():
				im.note(cm.Source, "ConfigMap kube-proxy", "mode %q is not modelled: iptables is taken", cfg.Mode)
			default:
				cluster.set("proxyMode", str(mode.String()), from)
				if s := cfg.IPVS.Scheduler; s != "" && mode == kubeproxy.IPVS {
					cluster.set("ipvsScheduler", str(s))
				}
			}
			sync := cfg.IPTables.MinSyncPeriod
			switch mode {
			case kubeproxy.Nftables:
				sync = cfg.NFTables.MinSyncPeriod
			case kubeproxy.IPVS:
				sync = cfg.IPVS.MinSyncPeriod
			}
			if sync != "" {
				cluster.set("minSyncPeriod", str(sync), from)
			}
			return
		}
	}
}

// poolLabels name a node's pool on the clouds and autoscalers that set them.
var poolLabels = []string{
	"cloud.google.com/gke-nodepool", "eks.amazonaws.com/nodegroup", "alpha.eksctl.io/nodegroup-name",
	"kubernetes.azure.com/agentpool", "agentpool", "karpenter.sh/nodepool", "node.kubernetes.io/instance-type",
}

// pool is nodes alike in what a run reads: allocatable CPU, labels, taints.
type pool struct {
	name   string
	count  int
	cpu    string
	labels map[string]string
	taints []corev1.Taint
	source inventory.Source
}

// pools groups the Nodes into pools of alike nodes, in the order first read.
// A node's own labels (its hostname, any label whose value is its name) are
// left out: the scenario names its nodes itself.
func (im *importer) pools() *yaml.Node {
	var pools []*pool
	for _, n := range im.inv.Nodes {
		node := n.Object
		labels := maps.Clone(node.Labels)
		maps.DeleteFunc(labels, func(k, v string) bool { return k == corev1.LabelHostname || v == node.Name })
		cpu := ""
		if q, ok := node.Status.Allocatable[corev1.ResourceCPU]; ok {
			cpu = q.String()
		} else if q, ok := node.Status.Capacity[corev1.ResourceCPU]; ok {
			cpu = q.String()
		}
		i := slices.IndexFunc(pools, func(p *pool) bool {
			return p.cpu == cpu && maps.Equal(p.labels, labels) && equality.Semantic.DeepEqual(p.taints, node.Spec.Taints)
		})
		if i >= 0 {
			pools[i].count++
			continue
		}
		pools = append(pools, &pool{count: 1, cpu: cpu, labels: labels, taints: node.Spec.Taints, source: n.Source})
	}
	if len(pools) == 0 {
		return nil
	}
	used := map[string]int{}
	var out []*yaml.Node
	for _, p := range pools {
		name := "pool"
		for _, l := range poolLabels {
			if v := p.labels[l]; v != "" {
				name = poolName(v)
				break
			}
		}
		used[name]++
		if used[name] > 1 {
			name = fmt.Sprintf("%s-%d", name, used[name])
		}
		m := newMapping().set("name", str(name)).set("count", integer(p.count))
		if p.cpu != "" {
			m.set("cpu", str(p.cpu))
		} else {
			im.note(p.source, "Node", "states no allocatable CPU: its pool's CPU is unlimited")
		}
		if len(p.labels) > 0 {
			n, _ := value(p.labels)
			m.set("labels", compact(n))
		}
		if len(p.taints) > 0 {
			taints := make([]corev1.Taint, len(p.taints))
			for i, t := range p.taints {
				taints[i] = corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect}
			}
			n, _ := value(taints)
			m.set("taints", compact(n))
		}
		out = append(out, m.node)
	}
	return sequence(out...)
}

// poolName is a label value as a pool's name, a DNS label short enough for its
// nodes' names.
func poolName(v string) string {
	name := strings.Trim(nonLabel.ReplaceAllString(strings.ToLower(v), "-"), "-")
	if len(name) > 50 {
		name = strings.TrimRight(name[:50], "-")
	}
	if name == "" {
		return "pool"
	}
	return name
}

var nonLabel = regexp.MustCompile(`[^a-z0-9-]+`)

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
