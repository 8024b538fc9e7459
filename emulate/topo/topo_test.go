package topo

import (
	"bufio"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"
	"trafficlab/emulate/emutest"
)

func TestOverlapping(t *testing.T) {
	out := []byte(`4: eth0    inet 192.0.2.2/24 brd 192.0.2.255 scope global eth0
default via 192.0.2.1 dev eth0
198.18.4.0/22 dev br-x proto kernel
local 198.19.0.1 dev lo table local
10.0.0.0/8 via 192.0.2.1`)
	got := overlapping(out)
	if len(got) != 2 || !strings.HasPrefix(got[0], "198.18.4.0/22") || !strings.HasPrefix(got[1], "local 198.19.0.1") {
		t.Errorf("overlapping = %q, want the 198.18.4.0/22 and 198.19.0.1 lines", got)
	}
}

func TestAddressPlan(t *testing.T) {
	cases := []struct{ got, want netip.Addr }{
		{nodeAddr(0), netip.MustParseAddr("198.18.0.1")},
		{podAddr(0, 0), netip.MustParseAddr("198.18.1.2")},
		{podAddr(2, 252), netip.MustParseAddr("198.18.3.254")},
		{ServiceIP(0), netip.MustParseAddr("198.19.0.1")},
		{ServiceIP(300), netip.MustParseAddr("198.19.1.45")},
	}
	for _, c := range cases {
		if c.got != c.want || !Reserved.Contains(c.got) {
			t.Errorf("got %s, want %s inside %s", c.got, c.want, Reserved)
		}
	}
}

// listen starts a server in pod p that answers each connection with the address it
// came from, then closes it.
func listen(t *testing.T, p *Pod) {
	t.Helper()
	var ln net.Listener
	err := InNetns(p.NS, func() (err error) {
		ln, err = net.Listen("tcp", netip.AddrPortFrom(p.IP, 8080).String())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintf(c, "%s\n", c.RemoteAddr().(*net.TCPAddr).IP)
			c.Close()
		}
	}()
}

// dial connects from pod from to to's server and returns the source address it saw.
func dial(from, to *Pod) (string, error) {
	var c net.Conn
	err := InNetns(from.NS, func() (err error) {
		c, err = net.DialTimeout("tcp", netip.AddrPortFrom(to.IP, 8080).String(), 2*time.Second)
		return err
	})
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), err
}

func TestPodsReachEachOtherAcrossNodes(t *testing.T) {
	emutest.NeedRoot(t, "ip")
	topo, err := Build([]string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { topo.Close() })
	pods := map[string]*Pod{}
	for _, p := range [][2]string{{"x", "a"}, {"y", "a"}, {"z", "b"}} {
		if pods[p[0]], err = topo.AddPod(p[0], p[1]); err != nil {
			t.Fatal(err)
		}
	}
	listen(t, pods["y"])
	listen(t, pods["z"])
	for _, to := range []string{"y", "z"} { // the same node, then the other
		start := time.Now()
		seen, err := dial(pods["x"], pods[to])
		if err != nil {
			t.Fatalf("x → %s: %v", to, err)
		}
		// Right after Build, as an emulated run's first request: a fabric still
		// coming up loses the first SYN, which costs the 1 s initial RTO.
		if took := time.Since(start); took > 200*time.Millisecond {
			t.Errorf("x → %s took %v: a lost SYN?", to, took)
		}
		// Pod to pod is not NATed: the server sees the client pod's own address.
		if seen != pods["x"].IP.String() {
			t.Errorf("x → %s: the server saw %s, want x's %s", to, seen, pods["x"].IP)
		}
	}
	if err := topo.RemovePod("z"); err != nil {
		t.Fatal(err)
	}
	if _, err := dial(pods["x"], pods["z"]); err == nil {
		t.Error("z is gone, yet x reached it")
	}
	// The freed address slot is used again.
	w, err := topo.AddPod("w", "b")
	if err != nil || w.IP != pods["z"].IP {
		t.Errorf("w got %v (%v), want z's freed %s", w, err, pods["z"].IP)
	}
	if err := topo.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := namespaces(topo.prefix); len(left) > 0 {
		t.Errorf("left behind: %q", left)
	}
}

func TestCleanupRemovesOnlyDeadRunsLeftovers(t *testing.T) {
	emutest.NeedRoot(t, "ip")
	// No process has a pid this large (Linux's pid_max is at most 2^22).
	dead := fmt.Sprintf("%s%d-1-node-x", Prefix, 1<<30)
	live := fmt.Sprintf("%s%d-999-node-x", Prefix, os.Getpid())
	for _, ns := range []string{dead, live} {
		if err := ip("netns", "add", ns); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ip("netns", "del", ns) })
	}
	done, err := Cleanup()
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 1 || done[0] != dead {
		t.Errorf("cleaned %q, want only %s", done, dead)
	}
	if left, _ := namespaces(live); len(left) != 1 {
		t.Errorf("the live run's namespace was removed")
	}
}

// A run's nodes and pods use the scenario's congestion control, not the host's (a
// new namespace starts with the host's, bbr on some); an algorithm the host does
// not allow namespaces to choose is allowed for the run only.
func TestCongestionControlIsTheScenarios(t *testing.T) {
	emutest.NeedRoot(t, "ip")
	before, err := os.ReadFile(allowedCC)
	if err != nil {
		t.Fatal(err)
	}
	for _, cc := range []string{"reno", "cubic"} {
		top, err := Build([]string{"n0"})
		if err != nil {
			t.Fatal(err)
		}
		if err := top.SetCongestionControl(cc); err != nil {
			top.Close()
			t.Fatal(err)
		}
		p, err := top.AddPod("a", "n0")
		if err != nil {
			top.Close()
			t.Fatal(err)
		}
		var node, pod []byte
		InNetns(top.NodeNS("n0"), func() error {
			node, _ = os.ReadFile("/proc/sys/net/ipv4/tcp_congestion_control")
			return nil
		})
		InNetns(p.NS, func() error {
			pod, _ = os.ReadFile("/proc/sys/net/ipv4/tcp_congestion_control")
			return nil
		})
		if err := top.Close(); err != nil {
			t.Fatal(err)
		}
		after, _ := os.ReadFile(allowedCC)
		if strings.TrimSpace(string(node)) != cc || strings.TrimSpace(string(pod)) != cc || string(after) != string(before) {
			t.Errorf("%s: node %q, pod %q; allowed %q after the run, %q before: want %s in both, the host's list as it was", cc, node, pod, after, before, cc)
		}
	}
}
