package clusterdns

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"trafficlab/sim"
)

// The server answers a headless Service's name with every ready pod, shuffled per
// response, NXDOMAIN when none is ready or the name is unknown, and nothing for
// AAAA; Go's resolver reads it as a cluster's clients do.
func TestAnswers(t *testing.T) {
	s, err := Listen("127.0.0.1:0", sim.Stream(1, "dns-test"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pods := []netip.Addr{netip.MustParseAddr("198.18.1.2"), netip.MustParseAddr("198.18.1.3"), netip.MustParseAddr("198.18.2.2")}
	db := Name("db", "default")
	s.Set(db, pods)
	s.Set(Name("empty", "default"), nil)
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, s.Addr())
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	firsts := map[netip.Addr]bool{}
	for range 60 {
		got, err := r.LookupNetIP(ctx, "ip4", db)
		if err != nil || len(got) != 3 {
			t.Fatalf("lookup %s: %v, %v", db, got, err)
		}
		firsts[got[0]] = true
	}
	// 60 uniform orders leave a pod never first with probability 3·(2/3)^60 ≈ 1e-10.
	if len(firsts) != 3 {
		t.Errorf("first addresses %v over 60 answers, want each pod", firsts)
	}
	for _, name := range []string{Name("empty", "default"), Name("nothing", "default"), "db.default.svc.cluster.local.default.svc.cluster.local."} {
		_, err := r.LookupNetIP(ctx, "ip4", name)
		var dnsErr *net.DNSError
		if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
			t.Errorf("lookup %s: %v, want no such host", name, err)
		}
	}
	if got, err := r.LookupNetIP(ctx, "ip6", db); err == nil && len(got) > 0 {
		t.Errorf("AAAA of %s: %v, want none", db, got)
	}
}
