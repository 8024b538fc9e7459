package report_test

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"trafficlab/report"
	"trafficlab/result"
)

// A cluster-engine run says where it ran and each difference between the cluster
// and the scenario, in the text and on the page alike; a run that found none says
// none, and other engines' runs say nothing of a cluster.
func TestClusterRunIsSaid(t *testing.T) {
	base := simulateSource(t, "grpc-pinning.yaml", []byte(grpcPinned))
	where := "Ran on the cluster at https://198.18.0.1:6443 (Kubernetes v1.36.3), in namespace tl-grpc-pinning-ab12c, with the image trafficlab.local/trafficlab:v1."
	differs := "Where the cluster differs from the scenario: kube-proxy runs in nftables mode, the scenario says iptables."
	for _, tc := range []struct {
		name       string
		cluster    *result.ClusterRun
		want, lack []string
	}{
		{"differs", &result.ClusterRun{Server: "https://198.18.0.1:6443", Version: "v1.36.3", Namespace: "tl-grpc-pinning-ab12c",
			Image: "trafficlab.local/trafficlab:v1", Differences: []string{"kube-proxy runs in nftables mode, the scenario says iptables"}},
			[]string{where, differs}, nil},
		{"as the scenario says", &result.ClusterRun{Server: "https://198.18.0.1:6443", Version: "v1.36.3", Namespace: "tl-grpc-pinning-ab12c",
			Image: "trafficlab.local/trafficlab:v1"}, []string{where}, []string{"differs from the scenario"}},
		{"another engine", nil, nil, []string{"Ran on the cluster", "differs from the scenario"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := *base
			r.Cluster = tc.cluster
			if tc.cluster != nil {
				r.Engine = "cluster"
			}
			var text, page bytes.Buffer
			if err := report.Text(&text, &r); err != nil {
				t.Fatal(err)
			}
			if err := report.HTML(&page, &r, report.HTMLOptions{}); err != nil {
				t.Fatal(err)
			}
			flat := strings.Join(strings.Fields(text.String()), " ")
			onPage := strings.Join(strings.Fields(html.UnescapeString(page.String())), " ")
			for _, w := range tc.want {
				if !strings.Contains(flat, w) || !strings.Contains(onPage, w) {
					t.Errorf("text (%v) or page (%v) lacks %q:\n%s", strings.Contains(flat, w), strings.Contains(onPage, w), w, text.String())
				}
			}
			for _, w := range tc.lack {
				if strings.Contains(flat, w) || strings.Contains(onPage, w) {
					t.Errorf("text or page has %q:\n%s", w, text.String())
				}
			}
		})
	}
}
