package serve

import (
	"bytes"
	"strings"

	"trafficlab/scenario"
)

// podWrapper makes a one-service scenario around a pod spec, so the spec is decoded,
// defaulted and validated by the scenario package itself: same units, same defaults,
// same messages as in a scenario file. The pod's lines go under `pod:`, indented by
// podIndent; diagnostics are moved back by wrapperLines and podIndent.
const (
	podWrapper = "apiVersion: " + scenario.APIVersion + "\n" +
		"kind: " + scenario.Kind + "\n" +
		"metadata: {name: serve}\n" +
		"spec:\n" +
		"  duration: 1s\n" +
		"  services:\n" +
		"  - name: serve\n" +
		"    replicas: 1\n" +
		"    pod:\n"
	wrapperLines = 9
	podIndent    = 6
	podPath      = "spec.services[0].pod"
)

// ParsePod reads a pod spec written as the value of spec.services[i].pod in a scenario
// (block or flow YAML) and returns it defaulted and validated as scenario.Load would.
// file names the spec in diagnostics (the CLI passes "--pod-spec"); their lines and
// columns are those of data, and their paths start at the pod ("serviceTime: ...").
// As with scenario.Load, the pod is nil when any diagnostic is an error, and warnings
// come back either way.
func ParsePod(file string, data []byte) (*scenario.Pod, scenario.Diagnostics) {
	var doc bytes.Buffer
	doc.WriteString(podWrapper)
	pad := strings.Repeat(" ", podIndent)
	for line := range strings.Lines(string(data)) {
		doc.WriteString(pad)
		doc.WriteString(line)
	}
	doc.WriteString("\n")
	sc, _, diags := scenario.Load(file, doc.Bytes(), nil)
	for i := range diags {
		d := &diags[i]
		if d.Line > wrapperLines {
			d.Line -= wrapperLines
			d.Col = max(1, d.Col-podIndent)
		} else {
			d.Line, d.Col = 0, 0 // the wrapper's own lines: the spec as a whole
		}
		d.Msg = strings.TrimPrefix(d.Msg, podPath+".")
		d.Msg = strings.TrimPrefix(d.Msg, podPath+": ")
		d.Msg = strings.ReplaceAll(d.Msg, podPath, "pod")
	}
	if sc == nil {
		return nil, diags
	}
	return &sc.Spec.Services[0].Pod, diags
}
