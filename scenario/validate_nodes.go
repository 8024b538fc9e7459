package scenario

// Checks of node resources, placement, logging, background workloads and rate curves.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"trafficlab/model/logpipe"
)

var (
	taintEffects    = []string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}
	tolerationOps   = []string{string(corev1.TolerationOpExists), string(corev1.TolerationOpEqual)}
	nodeSelectorOps = []string{
		string(corev1.NodeSelectorOpIn), string(corev1.NodeSelectorOpNotIn), string(corev1.NodeSelectorOpExists),
		string(corev1.NodeSelectorOpDoesNotExist), string(corev1.NodeSelectorOpGt), string(corev1.NodeSelectorOpLt),
	}
	// resourceNames are the resources a container may request that trafficlab reads
	// (cpu) or accepts as written (memory).
	resourceNames = []string{string(corev1.ResourceCPU), string(corev1.ResourceMemory)}
)

// fieldErrors reports the errors of Kubernetes' own validation, whose field paths
// were built from ours.
func (v *validator) fieldErrors(errs field.ErrorList) {
	for _, e := range errs {
		v.errorf(e.Field, "%s", e.ErrorBody())
	}
}

// nodePools checks what the pools add to plain cores: a disk, labels and taints.
func (v *validator) nodePool(path string, p *NodePool) {
	v.fieldErrors(metavalidation.ValidateLabels(p.Labels, field.NewPath(path+".labels")))
	if d := p.Disk; d != nil {
		if d.WriteBytesPerSecond != nil && d.WriteBytesPerSecond.Sign() <= 0 {
			v.errorf(path+".disk.writeBytesPerSecond", "must be greater than 0; leave it out for unlimited")
		}
		if d.IOPS < 0 {
			v.errorf(path+".disk.iops", "must not be negative; 0 is unlimited")
		}
	}
	for i, t := range p.Taints {
		at := fmt.Sprintf("%s.taints[%d]", path, i)
		if t.Key == "" {
			v.errorf(at+".key", "is required")
		} else {
			v.fieldErrors(metavalidation.ValidateLabelName(t.Key, field.NewPath(at+".key")))
		}
		if !v.written(at + ".effect") {
			v.errorf(at+".effect", "is required; valid: %s", strings.Join(taintEffects, ", "))
		} else {
			v.oneOf(at+".effect", "taint effect", string(t.Effect), taintEffects)
		}
	}
}

// nodeNames lists every node's name, POOL-i; call it only once the counts are
// within their limit.
func nodeNames(c *Cluster) []string {
	var names []string
	for _, p := range c.Nodes {
		for i := 0; i < p.Count; i++ {
			names = append(names, fmt.Sprintf("%s-%d", p.Name, i))
		}
	}
	return names
}

// resources checks a container's requests and limits.
func (v *validator) resources(path string, r *corev1.ResourceRequirements) {
	for _, list := range []struct {
		name string
		rl   corev1.ResourceList
	}{{"requests", r.Requests}, {"limits", r.Limits}} {
		for name, q := range list.rl {
			at := fmt.Sprintf("%s.%s.%s", path, list.name, name)
			if !v.written(at) {
				continue // defaulted from a limit, checked there
			}
			if !slices.Contains(resourceNames, string(name)) {
				v.warnf(at, "trafficlab models only %s; ignored", strings.Join(resourceNames, " and "))
			}
			if q.Sign() < 0 {
				v.errorf(at, "must not be negative")
			}
		}
	}
	req, hasReq := r.Requests[corev1.ResourceCPU]
	lim, hasLim := r.Limits[corev1.ResourceCPU]
	if hasReq && hasLim && req.Cmp(lim) > 0 {
		// pkg/apis/core/validation ValidateResourceRequirements.
		v.errorf(path+".requests.cpu", "must be less than or equal to the cpu limit (%s)", lim.String())
	}
	if hasLim && lim.Sign() == 0 {
		v.errorf(path+".limits.cpu", "must be greater than 0; leave it out for no limit")
	}
}

// placement checks a pod's node selector, affinity and tolerations.
func (v *validator) placement(path string, selector map[string]string, a *corev1.Affinity, tolerations []corev1.Toleration) {
	v.fieldErrors(metavalidation.ValidateLabels(selector, field.NewPath(path+".nodeSelector")))
	for i, t := range tolerations {
		at := fmt.Sprintf("%s.tolerations[%d]", path, i)
		op := t.Operator
		if op == "" {
			op = corev1.TolerationOpEqual
		}
		v.oneOf(at+".operator", "toleration operator", string(op), tolerationOps)
		switch {
		case op == corev1.TolerationOpExists && t.Value != "":
			// pkg/apis/core/validation validateTolerations.
			v.errorf(at+".value", "must be empty when operator is Exists")
		case op == corev1.TolerationOpEqual && t.Key == "":
			v.errorf(at+".key", "is required with operator Equal; an empty key with operator Exists tolerates everything")
		}
		if t.Effect != "" {
			v.oneOf(at+".effect", "taint effect", string(t.Effect), taintEffects)
		}
	}
	if a == nil {
		return
	}
	path += ".affinity"
	if na := a.NodeAffinity; na != nil {
		at := path + ".nodeAffinity"
		if r := na.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
			req := at + ".requiredDuringSchedulingIgnoredDuringExecution"
			if len(r.NodeSelectorTerms) == 0 {
				v.errorf(req+".nodeSelectorTerms", "must have at least one term")
			}
			for i := range r.NodeSelectorTerms {
				v.nodeSelectorTerm(fmt.Sprintf("%s.nodeSelectorTerms[%d]", req, i), &r.NodeSelectorTerms[i])
			}
		}
		for i := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			p := &na.PreferredDuringSchedulingIgnoredDuringExecution[i]
			pref := fmt.Sprintf("%s.preferredDuringSchedulingIgnoredDuringExecution[%d]", at, i)
			v.weight(pref+".weight", p.Weight)
			v.nodeSelectorTerm(pref+".preference", &p.Preference)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		v.podAffinityTerms(path+".podAffinity", pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		v.podAffinityTerms(path+".podAntiAffinity", pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
}

// podAffinityTerms checks a podAffinity's or podAntiAffinity's terms.
func (v *validator) podAffinityTerms(path string, required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm) {
	for i := range required {
		v.podAffinityTerm(fmt.Sprintf("%s.requiredDuringSchedulingIgnoredDuringExecution[%d]", path, i), &required[i])
	}
	for i := range preferred {
		pref := fmt.Sprintf("%s.preferredDuringSchedulingIgnoredDuringExecution[%d]", path, i)
		v.weight(pref+".weight", preferred[i].Weight)
		v.podAffinityTerm(pref+".podAffinityTerm", &preferred[i].PodAffinityTerm)
	}
}

// weight checks a preferred term's weight: 1 to 100 (pkg/apis/core/validation).
func (v *validator) weight(path string, w int32) {
	if w < 1 || w > 100 {
		v.errorf(path, "must be from 1 to 100")
	}
}

func (v *validator) nodeSelectorTerm(path string, t *corev1.NodeSelectorTerm) {
	if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
		v.errorf(path, "must have matchExpressions or matchFields")
	}
	for i, r := range t.MatchExpressions {
		v.nodeSelectorRequirement(fmt.Sprintf("%s.matchExpressions[%d]", path, i), r)
	}
	for i, r := range t.MatchFields {
		at := fmt.Sprintf("%s.matchFields[%d]", path, i)
		if r.Key != "metadata.name" {
			v.errorf(at+".key", "must be metadata.name, the only node field Kubernetes selects on")
		}
		v.nodeSelectorRequirement(at, r)
	}
}

// nodeSelectorRequirement checks an operator and its values as
// pkg/apis/core/validation validateNodeSelectorRequirement does.
func (v *validator) nodeSelectorRequirement(path string, r corev1.NodeSelectorRequirement) {
	v.oneOf(path+".operator", "operator", string(r.Operator), nodeSelectorOps)
	switch r.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			v.errorf(path+".values", "must be specified when operator is In or NotIn")
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(r.Values) > 0 {
			v.errorf(path+".values", "may not be specified when operator is Exists or DoesNotExist")
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			v.errorf(path+".values", "must be specified as one integer when operator is Gt or Lt")
		} else if _, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil {
			v.errorf(path+".values[0]", "must be an integer, got %q", r.Values[0])
		}
	}
}

func (v *validator) podAffinityTerm(path string, t *corev1.PodAffinityTerm) {
	if t.TopologyKey == "" {
		v.errorf(path+".topologyKey", "is required, e.g. kubernetes.io/hostname")
	}
	// Kubernetes' validation points at the field; the conversion the scheduler does
	// catches what it leaves, and would only repeat what it found.
	opts := metavalidation.LabelSelectorValidationOptions{}
	if errs := metavalidation.ValidateLabelSelector(t.LabelSelector, opts, field.NewPath(path+".labelSelector")); len(errs) > 0 {
		v.fieldErrors(errs)
	} else if _, err := metav1.LabelSelectorAsSelector(t.LabelSelector); err != nil {
		v.errorf(path+".labelSelector", "%v", err)
	}
}

// placed checks the pod-spec fields that place a service's pods.
func (v *validator) placed(path string, p *Pod, nodes []string) {
	v.resources(path+".resources", &p.Resources)
	if v.written(path+".cpu") && v.written(path+".resources.limits.cpu") {
		v.errorf(path+".cpu", "is the cpu limit, also set as resources.limits.cpu; set one")
	}
	v.fieldErrors(metavalidation.ValidateLabels(p.Labels, field.NewPath(path+".labels")))
	v.placement(path, p.NodeSelector, p.Affinity, p.Tolerations)
	v.topologySpread(path+".topologySpreadConstraints", p.TopologySpreadConstraints)
	if p.NodeName != "" && nodes != nil && !slices.Contains(nodes, p.NodeName) {
		v.errorf(path+".nodeName", "%s", unknownName("node", p.NodeName, nodes))
	}
	if a := p.AccessLog; a != nil {
		at := path + ".accessLog"
		switch {
		case *a.Bytes <= 0:
			v.errorf(at+".bytes", "must be greater than 0")
		case *a.Bytes > logpipe.PipeBuf:
			// pipe(7): writes over PIPE_BUF are not atomic; trafficlab models atomic lines.
			v.errorf(at+".bytes", "must be at most %d (PIPE_BUF): longer lines are not written to a pipe atomically, which trafficlab does not model", logpipe.PipeBuf)
		}
		if a.BufferBytes != nil {
			if *a.Sync {
				v.errorf(at+".bufferBytes", "applies only with sync: false")
			} else if *a.BufferBytes < 0 {
				v.errorf(at+".bufferBytes", "must not be negative")
			}
		}
	}
}

// background checks the workloads that share nodes without serving traffic.
func (v *validator) background(bgs []Background, names map[string]string, nodes []string) {
	for i := range bgs {
		b := &bgs[i]
		path := fmt.Sprintf("spec.background[%d]", i)
		at := func(field string) string { return path + "." + field }
		v.name(path, "workload", b.Name, names)
		switch {
		case b.Node != "" && b.Placement != nil:
			v.errorf(at("placement"), "cannot be set with node: node pins the pod, placement lets the scheduler choose; set one")
		case b.Node != "" && nodes != nil && !slices.Contains(nodes, b.Node):
			v.errorf(at("node"), "%s", unknownName("node", b.Node, nodes))
		}
		if b.Placement != nil {
			v.placement(at("placement"), b.Placement.NodeSelector, b.Placement.Affinity, b.Placement.Tolerations)
		}
		v.fieldErrors(metavalidation.ValidateLabels(b.Labels, field.NewPath(at("labels"))))
		v.resources(at("resources"), &b.Resources)
		if b.CPU == nil && b.DiskWriteBytesPerSecond == nil {
			v.errorf(path, "needs cpu (cores to burn), diskWriteBytesPerSecond, or both")
		}
		if b.CPU != nil && b.CPU.Sign() <= 0 {
			v.errorf(at("cpu"), "must be greater than 0")
		}
		if b.DiskWriteBytesPerSecond != nil {
			if b.DiskWriteBytesPerSecond.Sign() <= 0 {
				v.errorf(at("diskWriteBytesPerSecond"), "must be greater than 0")
			}
			if *b.DiskWriteChunkBytes <= 0 {
				v.errorf(at("diskWriteChunkBytes"), "must be greater than 0")
			}
			if *b.DiskIOBytes < 0 {
				v.errorf(at("diskIOBytes"), "must not be negative; 0 is large merged I/Os")
			}
		} else {
			for _, f := range []string{"diskWriteChunkBytes", "diskIOBytes"} {
				if v.written(at(f)) {
					v.warnf(at(f), "applies only with diskWriteBytesPerSecond; ignored")
				}
			}
		}
		if s := b.Schedule; s != nil {
			v.schedule(at("schedule"), s)
		}
	}
}

func (v *validator) schedule(path string, s *Schedule) {
	if s.Diurnal == nil && s.Bursts == nil {
		v.errorf(path, "needs diurnal, bursts, or both")
	}
	if d := s.Diurnal; d != nil {
		at := path + ".diurnal"
		if d.Min < 0 || d.Min > 1 {
			v.errorf(at+".min", "must be a fraction from 0 to 1")
		}
		if *d.Max < d.Min || *d.Max > 1 {
			v.errorf(at+".max", "must be from min (%g) to 1", d.Min)
		}
		if d.Period.Duration <= 0 {
			v.errorf(at+".period", "must be greater than 0")
		}
	}
	if b := s.Bursts; b != nil {
		at := path + ".bursts"
		v.positive(at+".every", b.Every.Duration, "required by bursts")
		v.positive(at+".length", b.Length.Duration, "required by bursts")
		if b.Length.Duration > b.Every.Duration && b.Every.Duration > 0 {
			v.errorf(at+".length", "must not be longer than every (%s)", b.Every.Duration)
		}
	}
}

// rateCurve checks a client's open-loop rate over time.
func (v *validator) rateCurve(path string, c *Client) {
	r := c.RateCurve
	at := path + ".rateCurve"
	const one = "cannot be set with rateCurve, which sets the rate over the whole run"
	// By value: a field set to null (--set spec.clients[0].threads=) is unset.
	for _, f := range []struct {
		name string
		set  bool
	}{{"rate", c.Rate != nil}, {"threads", c.Threads != 0}, {"phases", c.Phases != nil}} {
		if f.set {
			v.errorf(path+"."+f.name, one)
		}
	}
	switch {
	case len(r.Points) > 0 && r.Diurnal != nil:
		v.errorf(at+".diurnal", "cannot be set with points; set one")
	case len(r.Points) == 0 && r.Diurnal == nil:
		v.errorf(at, "needs points or diurnal")
	}
	for i, p := range r.Points {
		pt := fmt.Sprintf("%s.points[%d]", at, i)
		if p.Rate == nil {
			v.errorf(pt+".rate", "is required, e.g. 1000/s")
		}
		if i > 0 && p.At.Duration <= r.Points[i-1].At.Duration {
			v.errorf(pt+".at", "must be later than the point before it (%s)", r.Points[i-1].At.Duration)
		}
	}
	if d := r.Diurnal; d != nil {
		da := at + ".diurnal"
		if d.Min == nil {
			v.errorf(da+".min", "is required, e.g. 1000/s")
		}
		if d.Max == nil {
			v.errorf(da+".max", "is required, e.g. 3000/s")
		}
		if d.Min != nil && d.Max != nil && d.Max.PerSecond < d.Min.PerSecond {
			v.errorf(da+".max", "must not be below min (%g/s)", d.Min.PerSecond)
		}
		if d.Period.Duration <= 0 {
			v.errorf(da+".period", "must be greater than 0")
		}
	}
}

// whenUnsatisfiable are a spread constraint's actions.
var whenUnsatisfiable = []string{string(corev1.DoNotSchedule), string(corev1.ScheduleAnyway)}

// topologySpread checks spread constraints as the API server does
// (pkg/apis/core/validation validateTopologySpreadConstraints).
func (v *validator) topologySpread(path string, constraints []corev1.TopologySpreadConstraint) {
	seen := map[string]int{}
	for i := range constraints {
		c := &constraints[i]
		at := fmt.Sprintf("%s[%d]", path, i)
		if c.MaxSkew < 1 {
			v.errorf(at+".maxSkew", "must be at least 1")
		}
		if c.TopologyKey == "" {
			v.errorf(at+".topologyKey", "is required: the node label to spread over, such as %s or %s", corev1.LabelHostname, corev1.LabelTopologyZone)
		}
		v.oneOf(at+".whenUnsatisfiable", "action", string(c.WhenUnsatisfiable), whenUnsatisfiable)
		if key := c.TopologyKey + "/" + string(c.WhenUnsatisfiable); c.TopologyKey != "" {
			if j, ok := seen[key]; ok {
				v.errorf(at, "repeats the topologyKey and whenUnsatisfiable of %s[%d]", path, j)
			}
			seen[key] = i
		}
		if c.MinDomains != nil {
			switch {
			case *c.MinDomains < 1:
				v.errorf(at+".minDomains", "must be at least 1")
			case c.WhenUnsatisfiable != corev1.DoNotSchedule:
				v.errorf(at+".minDomains", "applies only with whenUnsatisfiable DoNotSchedule")
			}
		}
		for _, p := range []*corev1.NodeInclusionPolicy{c.NodeAffinityPolicy, c.NodeTaintsPolicy} {
			if p != nil && *p != corev1.NodeInclusionPolicyHonor && *p != corev1.NodeInclusionPolicyIgnore {
				v.errorf(at, "node inclusion policy %q: want Honor or Ignore", *p)
			}
		}
		if c.LabelSelector != nil {
			if _, err := metav1.LabelSelectorAsSelector(c.LabelSelector); err != nil {
				v.errorf(at+".labelSelector", "%v", err)
			}
		}
	}
}
