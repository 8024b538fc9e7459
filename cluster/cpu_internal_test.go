package cluster

import "testing"

// label reads one label of a cAdvisor metric line's labels, whichever its place,
// and not another label whose name ends the same.
func TestLabel(t *testing.T) {
	labels := `container="app",id="/kubepods/burstable/pod1/abc",image="trafficlab.local/trafficlab:v1",name="abc",namespace="tl-x-ab12c",pod="api-5cf6-rwnr9"`
	for _, tc := range []struct{ name, want string }{
		{"container", "app"}, {"namespace", "tl-x-ab12c"}, {"pod", "api-5cf6-rwnr9"}, {"name", "abc"}, {"uid", ""},
	} {
		if got := label(labels, tc.name); got != tc.want {
			t.Errorf("label %s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
