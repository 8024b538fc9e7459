package emulate

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"trafficlab/emulate/emutest"
	"trafficlab/model/kubeproxy"
	"trafficlab/resultfile"
	"trafficlab/scenario"
)

// TestEndedForReal: a scenario with two client pods, run for real, sums up every
// request that ended in the Result's Ended, which passes the checks a Result read
// from a file must (resultfile.Check), on the wall clock of the run.
func TestEndedForReal(t *testing.T) {
	emutest.NeedRoot(t, "ip", "iptables-restore", "nft")
	doc := strings.Replace(fmt.Sprintf(smallCluster, kubeproxy.Iptables, scenario.ReusePerThread),
		"    threads: 2\n", "    threads: 2\n    replicas: 2\n", 1)
	before := time.Now()
	r := emulateDoc(t, "small.yaml", doc)
	after := time.Now()
	x := r.Ended
	if x == nil || r.Requests.Total == 0 || x.StatusCodes["200"] != r.Requests.Total || len(x.StatusCodes) != 1 ||
		x.LatencyMinNS <= 0 || x.StartUnixNS < before.UnixNano() || x.StartUnixNS > after.UnixNano() {
		t.Fatalf("ended %+v for requests %+v, run from %d to %d", x, r.Requests, before.UnixNano(), after.UnixNano())
	}
	if len(r.Clients) != 1 || r.Clients[0].Replicas != 2 {
		t.Errorf("clients %+v, want one of 2 replicas", r.Clients)
	}
	if err := resultfile.Check(r); err != nil {
		t.Error(err)
	}
}
