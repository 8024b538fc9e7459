package load

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"testing"

	"trafficlab/emulate/clusterdns"
	"trafficlab/model/library"
	"trafficlab/sim"
)

// A named target resolves at the given DNS server and is dialled as the library
// dials: Go tries the next address after a refusal, so every dial reaches the
// one pod that listens; java.net.http tries its first address only, and fails
// whenever the answer put the refusing one first; a name with no pod is no such
// host.
func TestNamesDialAsTheLibraryDoes(t *testing.T) {
	dns, err := clusterdns.Listen("127.0.0.1:0", sim.Stream(1, "names-test"))
	if err != nil {
		t.Fatal(err)
	}
	defer dns.Close()
	pod, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pod.Close()
	go func() {
		for {
			c, err := pod.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := pod.Addr().(*net.TCPAddr).Port
	// 127.0.0.2 has nothing listening on the port: it refuses.
	dns.Set(clusterdns.Name("web", "default"), []netip.Addr{netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.1")})
	dns.Set(clusterdns.Name("none", "default"), nil)
	plain := (&net.Dialer{}).DialContext
	for _, c := range []struct {
		lib      string
		failsAny bool
	}{{"go-net-http", false}, {"java-httpclient", true}} {
		// A cache of 30 s would keep one order: each dial here needs a new answer.
		res := library.ResolutionOf(c.lib)
		res.Cache = 0
		n := newNames(res, dns.Addr(), 1, "test")
		failed := 0
		for range 40 {
			conn, err := n.dial(context.Background(), "tcp", net.JoinHostPort(clusterdns.Name("web", "default"), itoa(port)), plain)
			if err != nil {
				if !errors.Is(err, syscall.ECONNREFUSED) {
					t.Fatalf("%s: %v, want a refusal if anything", c.lib, err)
				}
				failed++
				continue
			}
			conn.Close()
		}
		// Either address first with p = 1/2 per answer: none of 40 first is 1e-12.
		if (failed > 0) != c.failsAny {
			t.Errorf("%s: %d of 40 dials failed", c.lib, failed)
		}
		_, err := n.dial(context.Background(), "tcp", net.JoinHostPort(clusterdns.Name("none", "default"), "80"), plain)
		var dnsErr *net.DNSError
		if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound || classify(err) != kindNoSuchHost {
			t.Errorf("%s: a name with no pod: %v, want no such host", c.lib, err)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
