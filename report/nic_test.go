package report

import (
	"strings"
	"testing"

	"trafficlab/result"
)

// Only nodes with a NIC bandwidth are listed, and a NIC busy 90 % or more is called
// out as the limit.
func TestNICLine(t *testing.T) {
	cases := []struct {
		nodes []result.Node
		want  string
	}{
		{[]result.Node{{Name: "a-0"}}, ""},
		{[]result.Node{{Name: "a-0", NICTxUtilization: 0.5, NICRxUtilization: 0.02, NICMaxWaitMS: 1.5}, {Name: "b-0"}},
			"\nNetwork interfaces: a-0 out 50%, in 2.0%, packets queued up to 1.5 ms.\n"},
		{[]result.Node{{Name: "a-0", NICTxUtilization: 0.95, NICRxUtilization: 0.03, NICMaxWaitMS: 900}},
			"\nNetwork interfaces: a-0 out 95%, in 3.0%, packets queued up to 900 ms. A NIC busy 90% of the time or more\nlimits every pod on its node: its packets queue behind the others'.\n"},
	}
	for _, tc := range cases {
		var b strings.Builder
		writeNICs(&b, &result.Result{Nodes: tc.nodes})
		if b.String() != tc.want {
			t.Errorf("got %q\nwant %q", b.String(), tc.want)
		}
	}
}
