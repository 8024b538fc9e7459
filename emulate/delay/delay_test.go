package delay

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"trafficlab/emulate/emutest"
	"trafficlab/emulate/faults"
	"trafficlab/emulate/topo"
	"trafficlab/scenario"
	"trafficlab/sim"
)

const ms = float64(time.Millisecond)

// Each statistic must lie within 5 standard errors of its expected value: with a
// fixed seed the test is deterministic, and 5 SE leaves a margin that a correct
// draw misses with probability below 1e-6 for any seed.
func TestDraw(t *testing.T) {
	const n = 200_000
	normalCDF := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	for _, c := range []struct {
		name            string
		latency, jitter time.Duration
		dist            string
		// lo and hi bound every draw; mean and sd are the expected moments, with
		// kurtosis for the standard error of the SD: sqrt((kurtosis-1)/(4n))·sd.
		lo, hi, mean, sd, kurtosis float64
		zeros                      float64 // expected share clamped to 0; -1: moments apply instead
	}{
		{"constant", 5 * time.Millisecond, 0, "", 5 * ms, 5 * ms, 5 * ms, 0, 0, -1},
		{"uniform", 5 * time.Millisecond, time.Millisecond, scenario.JitterUniform, 4 * ms, 6 * ms, 5 * ms, ms / math.Sqrt(3), 1.8, -1},
		{"uniform by default", 5 * time.Millisecond, 2 * time.Millisecond, "", 3 * ms, 7 * ms, 5 * ms, 2 * ms / math.Sqrt(3), 1.8, -1},
		{"normal", 5 * time.Millisecond, time.Millisecond, scenario.JitterNormal, 0, math.Inf(1), 5 * ms, ms, 3, -1},
		// Below zero is clamped: uniform on [-2, 4] ms is negative a third of the time.
		{"uniform clamped", time.Millisecond, 3 * time.Millisecond, scenario.JitterUniform, 0, 4 * ms, 0, 0, 0, 1.0 / 3},
		{"normal clamped", time.Millisecond, 5 * time.Millisecond, scenario.JitterNormal, 0, math.Inf(1), 0, 0, 0, normalCDF(-0.2)},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := sim.Stream(1, "delay/test/"+c.name)
			var sum, sumSq float64
			zeros := 0
			for range n {
				d := float64(draw(rng, c.latency, c.jitter, c.dist))
				if d < c.lo || d > c.hi {
					t.Fatalf("draw %.3f ms outside [%.3f, %.3f] ms", d/ms, c.lo/ms, c.hi/ms)
				}
				if d == 0 {
					zeros++
				}
				sum += d
				sumSq += d * d
			}
			if c.zeros >= 0 {
				got, se := float64(zeros)/n, math.Sqrt(c.zeros*(1-c.zeros)/n)
				if math.Abs(got-c.zeros) > 5*se {
					t.Errorf("share clamped to 0: %.4f, want %.4f ± %.4f", got, c.zeros, 5*se)
				}
				return
			}
			mean := sum / n
			sd := math.Sqrt(max(sumSq/n-mean*mean, 0))
			if tol := 5 * c.sd / math.Sqrt(n); math.Abs(mean-c.mean) > tol {
				t.Errorf("mean %.4f ms, want %.4f ± %.4f ms", mean/ms, c.mean/ms, tol/ms)
			}
			if tol := 5 * c.sd * math.Sqrt((c.kurtosis-1)/(4*n)); math.Abs(sd-c.sd) > tol {
				t.Errorf("SD %.4f ms, want %.4f ± %.4f ms", sd/ms, c.sd/ms, tol/ms)
			}
		})
	}
}

// Packets leave by wake time and, among equal wake times, in the order they came
// (nfqueue's ids), as netem's tfifo keeps them.
func TestHeldPopsInWakeThenArrivalOrder(t *testing.T) {
	rng := sim.Stream(1, "delay/test/held")
	var h held
	var want []packet
	for i := range 1000 {
		p := packet{wake: time.Duration(rng.IntN(100)), id: uint32(i)} // many ties
		h.push(p)
		want = append(want, p)
	}
	slices.SortStableFunc(want, func(a, b packet) int { return cmp.Compare(a.wake, b.wake) })
	for i, w := range want {
		if p := h.pop(); p != w {
			t.Fatalf("pop %d: wake %v id %d, want wake %v id %d", i, p.wake, p.id, w.wake, w.id)
		}
	}
	if h.len() != 0 {
		t.Fatalf("%d left", h.len())
	}
}

func TestExpand(t *testing.T) {
	rules, err := expand(Config{NS: "n", Seed: 3, Rules: []Rule{
		{Veth: "p0", Direction: faults.Both, Latency: time.Millisecond},
		{Veth: "p1", Direction: faults.From, Latency: time.Millisecond, Jitter: time.Millisecond, Distribution: scenario.JitterNormal},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rules {
		got = append(got, r.veth+"/"+r.dir)
	}
	if want := []string{"p0/to", "p0/from", "p1/from"}; !slices.Equal(got, want) {
		t.Errorf("rules %v, want %v", got, want)
	}
	// Each direction has its own stream, the one sim.Stream names for it.
	if a, b := rules[0].rng.Uint64(), sim.Stream(3, "delay/p0/to").Uint64(); a != b {
		t.Errorf("p0/to draws %d, sim.Stream(3, delay/p0/to) %d", a, b)
	}
	if a, b := rules[1].rng.Uint64(), sim.Stream(3, "delay/p0/to").Uint64(); a == b {
		t.Errorf("p0/from shares p0/to's stream")
	}
	for _, bad := range []Config{
		{Rules: []Rule{{Veth: "p0"}}},
		{NS: "n"},
		{NS: "n", Rules: []Rule{{Latency: time.Millisecond}}},
		{NS: "n", Rules: []Rule{{Veth: "p0", Latency: -time.Millisecond}}},
		{NS: "n", Rules: []Rule{{Veth: "p0", Jitter: -time.Millisecond}}},
		{NS: "n", Rules: []Rule{{Veth: "p0", Direction: "sideways"}}},
		{NS: "n", Rules: []Rule{{Veth: "p0", Jitter: time.Millisecond, Distribution: "pareto"}}},
		{NS: "n", Rules: []Rule{{Veth: "p0", Direction: faults.To}, {Veth: "p0"}}},
	} {
		if _, err := expand(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestRestoreScript(t *testing.T) {
	rules := []rule{{veth: "p0", dir: faults.To}, {veth: "p0", dir: faults.From}, {veth: "p3", dir: faults.To}}
	add := string(restoreScript("TL-DELAY-1-2", 7100, rules, false))
	want := "*raw\n:TL-DELAY-1-2 - [0:0]\n" +
		"-A TL-DELAY-1-2 -i p0 -j NFQUEUE --queue-num 7100 --queue-bypass\n" +
		"-A TL-DELAY-1-2 -i p3 -j NFQUEUE --queue-num 7100 --queue-bypass\n" +
		"-I PREROUTING -j TL-DELAY-1-2\nCOMMIT\n" +
		"*mangle\n:TL-DELAY-1-2 - [0:0]\n" +
		"-A TL-DELAY-1-2 -o p0 -j NFQUEUE --queue-num 7100 --queue-bypass\n" +
		"-I POSTROUTING -j TL-DELAY-1-2\nCOMMIT\n"
	if add != want {
		t.Errorf("script:\n%s\nwant:\n%s", add, want)
	}
	del := string(restoreScript("TL-DELAY-1-2", 7100, rules[2:], true))
	if want := "*raw\n-D PREROUTING -j TL-DELAY-1-2\n-F TL-DELAY-1-2\n-X TL-DELAY-1-2\nCOMMIT\n"; del != want {
		t.Errorf("undo:\n%s\nwant:\n%s", del, want)
	}
}

// pinger measures both legs of a TCP round trip between a client and a server in
// this process, on one clock: the server stamps the moment a byte arrives.
type pinger struct {
	c      net.Conn
	stamps chan time.Time
}

func newPinger(t *testing.T, server *topo.Pod, dialer *topo.Dialer) *pinger {
	t.Helper()
	addr := netip.AddrPortFrom(server.IP, 9000)
	var ln net.Listener
	if err := topo.InNetns(server.NS, func() (err error) { ln, err = net.Listen("tcp", addr.String()); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p := &pinger{stamps: make(chan time.Time, 1)}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var b [1]byte
		for {
			if _, err := c.Read(b[:]); err != nil {
				return
			}
			p.stamps <- time.Now()
			if _, err := c.Write(b[:]); err != nil {
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := dialer.DialContext(ctx, "tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	p.c = c
	return p
}

// legs sends n one-byte pings and returns the median time to the server and back.
func (p *pinger) legs(t *testing.T, n int) (to, back time.Duration, raw [][2]time.Duration) {
	t.Helper()
	var b [1]byte
	for range n {
		p.c.SetDeadline(time.Now().Add(5 * time.Second))
		t0 := time.Now()
		if _, err := p.c.Write(b[:]); err != nil {
			t.Fatal(err)
		}
		if _, err := p.c.Read(b[:]); err != nil {
			t.Fatal(err)
		}
		t2 := time.Now()
		t1 := <-p.stamps
		raw = append(raw, [2]time.Duration{t1.Sub(t0), t2.Sub(t1)})
	}
	return median(raw, 0), median(raw, 1), raw
}

func median(xs [][2]time.Duration, i int) time.Duration {
	var v []time.Duration
	for _, x := range xs {
		v = append(v, x[i])
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// start starts a Delayer that the test closes when it ends, whatever happens.
func start(t *testing.T, ns string, rules ...Rule) *Delayer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := Start(ctx, Config{NS: ns, Seed: 1, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// stop closes d and checks that it left none of its chains, kept every packet and
// dropped none.
func stop(t *testing.T, d *Delayer) Stats {
	t.Helper()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	s := d.Stats()
	t.Logf("%+v", s)
	if s.Delayed == 0 || s.Dropped != 0 {
		t.Errorf("delayed %d, dropped %d: want some and none", s.Delayed, s.Dropped)
	}
	for _, ns := range []string{d.ns, ""} { // and nothing in the host's namespace
		args := []string{"iptables-save"}
		if ns != "" {
			args = append([]string{"ip", "netns", "exec", ns}, args...)
		}
		out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v: %s", args, err, out)
		}
		if strings.Contains(string(out), d.chain+" ") || strings.Contains(string(out), d.chain+"\n") {
			t.Errorf("%s left after Close in %q:\n%s", d.chain, ns, out)
		}
	}
	return s
}

// spread is the timing noise of legs that should all take the same time: a robust
// standard deviation (the interquartile range over 1.349, as for a normal one), which
// one scheduling hiccup of this shared machine does not inflate.
func spread(v []time.Duration) time.Duration {
	s := slices.Clone(v)
	slices.Sort(s)
	return time.Duration(float64(s[3*len(s)/4]-s[len(s)/4]) / 1.349)
}

// medianSE is the standard error of the median of n legs with that spread:
// sqrt(π/2)·σ/√n for a normal sample.
func medianSE(sd time.Duration, n int) time.Duration {
	return time.Duration(1.2533 * float64(sd) / math.Sqrt(float64(n)))
}

// ksDistance is the two-sample Kolmogorov–Smirnov statistic: the largest gap between
// the empirical CDFs of a and b.
func ksDistance(a, b []float64) float64 {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	var d float64
	for i, j := 0, 0; i < len(a) && j < len(b); {
		x := min(a[i], b[j])
		for i < len(a) && a[i] <= x {
			i++
		}
		for j < len(b) && b[j] <= x {
			j++
		}
		d = max(d, math.Abs(float64(i)/float64(len(a))-float64(j)/float64(len(b))))
	}
	return d
}

// ksCritical is the distance two samples of sizes n and m drawn from one distribution
// exceed with probability alpha, by the asymptotic Kolmogorov distribution:
// sqrt(-ln(alpha/2)/2)·sqrt((n+m)/(n·m)).
func ksCritical(alpha float64, n, m int) float64 {
	return math.Sqrt(-math.Log(alpha/2)/2) * math.Sqrt(float64(n+m)/float64(n*m))
}

// latency is the delay the subtests add.
const latency = 5 * time.Millisecond

// The accuracy target: the hand-off of each packet to this process, which the
// lead cannot see (0.05-0.1 ms measured), and the wake-up delay beyond the lead,
// on a quiet machine. On a busy one both grow: probed runs the legs beside a
// probe of this machine's timer wake-ups and goroutine hand-offs
// (emutest.WakeupProbe), whose medians are added to the target.
const late = 250 * time.Microsecond

// baseLegs is how many undelayed legs measure this machine's noise.
const baseLegs = 100

// veth is a node with a server pod and a caller pod, a pinger between them and the
// undelayed legs measured.
type veth struct {
	node                    string
	web, caller             *topo.Pod
	dialer                  *topo.Dialer
	p                       *pinger
	baseTo, baseBack, noise time.Duration
}

func newVeth(t *testing.T) *veth {
	c, err := topo.Build([]string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	web, err := c.AddPod("web-0", "a")
	if err != nil {
		t.Fatal(err)
	}
	caller, err := c.AddPod("caller-0", "a")
	if err != nil {
		t.Fatal(err)
	}
	dialer, err := topo.NewDialer(caller.NS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dialer.Close)
	node := c.NodeNS("a")
	p := newPinger(t, web, dialer)
	p.legs(t, 5) // warm up
	baseTo, baseBack, raw := p.legs(t, baseLegs)
	var tos, backs []time.Duration
	for _, r := range raw {
		tos, backs = append(tos, r[0]), append(backs, r[1])
	}
	noise := max(spread(tos), spread(backs))
	t.Logf("undelayed legs: %v there, %v back; this machine's timing noise on a leg: %v (robust SD of %d)", baseTo, baseBack, noise, baseLegs)
	return &veth{node: node, web: web, caller: caller, dialer: dialer, p: p, baseTo: baseTo, baseBack: baseBack, noise: noise}
}

// probed runs n legs beside a probe of this machine's wake-ups and hand-offs (see late).
func (v *veth) probed(t *testing.T, n int) (to, back time.Duration, raw [][2]time.Duration, wait time.Duration) {
	t.Helper()
	probe, err := emutest.StartWakeupProbe(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	to, back, raw = v.p.legs(t, n)
	probe.Stop()
	wait = emutest.Quantile(probe.Timer, 0.5) + emutest.Quantile(probe.Handoff, 0.5)
	return to, back, raw, wait
}

// within checks that got is want more than base, within the target and the noise.
func (v *veth) within(t *testing.T, what string, got, base, want, wait time.Duration, n int) {
	t.Helper()
	se := time.Duration(math.Hypot(float64(medianSE(v.noise, n)), float64(medianSE(v.noise, baseLegs))))
	if added := got - base; added < want-5*se || added > want+late+wait+5*se {
		t.Errorf("%s: %v, %v more than undelayed; want %v more (-%v, +%v for the target, +%v for this machine's median wake-up and hand-off during the legs and +%v for its noise, 5 SE of medians of legs with a robust SD of %v)", what, got, added, want, 5*se, late, wait, 5*se, v.noise)
	}
}

// floor checks that no leg was shorter than its delay.
func (v *veth) floor(t *testing.T, what string, raw [][2]time.Duration, there, back time.Duration) {
	t.Helper()
	for i, r := range raw {
		if r[0] < there || r[1] < back {
			t.Errorf("%s: leg %d took %v there and %v back, shorter than its delay (%v, %v): a packet went early", what, i, r[0], r[1], there, back)
		}
	}
}

// The real thing, on one node with a server pod and a client pod. No leg comes out
// shorter than its delay: the relay never lets a packet go early, and the leg's
// undelayed part comes on top. Accuracy target: each 5 ms traversal lands within
// 0.25 ms above 5 ms (late, below), in medians of 30–40 round trips. On top of both
// bounds comes this machine's own timing noise, measured first on undelayed legs:
// five standard errors of the medians compared.
func TestDelayOnAVeth(t *testing.T) {
	emutest.NeedRoot(t, "ip", "iptables-restore", "iptables-save")
	v := newVeth(t)
	t.Run("direction", func(t *testing.T) { vethDirection(t, v) })
	t.Run("http", func(t *testing.T) { vethHTTP(t, v) })
	t.Run("close releases what it holds", func(t *testing.T) { vethCloseReleases(t, v) })
	t.Run("two in one namespace", func(t *testing.T) { vethTwoInOneNamespace(t, v) })
	t.Run("jitter", func(t *testing.T) { vethJitter(t, v) })
}

// vethDirection: a delay on the packets a pod receives, sends, or both, adds to the
// legs it should and to no other, and no packet goes early.
func vethDirection(t *testing.T, v *veth) {
	node, web, baseTo, baseBack, probed, within, floor := v.node, v.web, v.baseTo, v.baseBack, v.probed, v.within, v.floor
	for _, c := range []struct {
		dir         string
		there, back time.Duration // added to the leg to the server and back
	}{
		{faults.From, latency, 0}, // packets the server pod receives
		{faults.To, 0, latency},   // packets it sends
		{faults.Both, latency, latency},
	} {
		d := start(t, node, Rule{Veth: web.Veth, Direction: c.dir, Latency: latency})
		const n = 30
		to, back, raw, wait := probed(t, n)
		t.Logf("%s: %v there, %v back; wake-up and hand-off %v", c.dir, to, back, wait)
		within(t, c.dir+" there", to, baseTo, c.there, wait, n)
		within(t, c.dir+" back", back, baseBack, c.back, wait, n)
		floor(t, c.dir, raw, c.there, c.back)
		s := stop(t, d)
		if s.MeanLate < 0 || s.MaxLate < 0 {
			t.Errorf("%s: verdicts %v late on average, at most %v: none may be early", c.dir, s.MeanLate, s.MaxLate)
		}
	}
}

// vethHTTP: a delay both ways adds twice to an HTTP round trip on a kept-alive
// connection.
func vethHTTP(t *testing.T, v *veth) {
	node, web, dialer := v.node, v.web, v.dialer
	addr := netip.AddrPortFrom(web.IP, 8080)
	emutest.Serve(t, topo.InNetns, web.NS, web.Name, addr, emutest.Pod(t, "{serviceTime: {distribution: constant, value: 100us}}"))
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: dialer.DialContext}}
	t.Cleanup(client.CloseIdleConnections)
	const n = 40
	rtt := func() (time.Duration, []time.Duration) {
		var v []time.Duration
		for range n {
			t0 := time.Now()
			resp, err := client.Get(fmt.Sprintf("http://%s/", addr))
			if err != nil {
				t.Fatal(err)
			}
			// Read to the end, or the transport closes the connection
			// instead of reusing it.
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			v = append(v, time.Since(t0))
		}
		s := slices.Clone(v)
		slices.Sort(s)
		return s[len(s)/2], v
	}
	rtt() // connect and warm up: later requests reuse the connection
	base, baseAll := rtt()
	d := start(t, node, Rule{Veth: web.Veth, Direction: faults.Both, Latency: latency})
	// As probed does for the legs: this machine's median wake-up and hand-off while
	// the round trips run are added to each traversal's target.
	probe, err := emutest.StartWakeupProbe(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	got, all := rtt()
	probe.Stop()
	wait := emutest.Quantile(probe.Timer, 0.5) + emutest.Quantile(probe.Handoff, 0.5)
	stop(t, d)
	t.Logf("HTTP round trip %v undelayed, %v with %v each way; wake-up and hand-off %v", base, got, latency, wait)
	// The request crosses the server's veth once toward the pod, the answer once
	// away from it: two traversals, each within the accuracy target, and each a
	// floor under every round trip.
	sd := spread(baseAll)
	se := time.Duration(math.Sqrt2 * float64(medianSE(sd, n)))
	if added := got - base; added < 2*latency-5*se || added > 2*(latency+late+wait)+5*se {
		t.Errorf("round trip %v more, want %v (-%v, +%v; %v of it this machine's median wake-up and hand-off twice, %v its noise, undelayed round trips' robust SD %v)",
			added, 2*latency, 5*se, 2*(late+wait)+5*se, 2*wait, 5*se, sd)
	}
	for i, rt := range all {
		if rt < 2*latency {
			t.Errorf("round trip %d took %v, less than its two delays: a packet went early", i, rt)
		}
	}
}

// A byte held for 2 s when Close comes goes on at once: not dropped, which the
// client's TCP would show as a retransmission, and not kept.
func vethCloseReleases(t *testing.T, v *veth) {
	node, web, p := v.node, v.web, v.p
	retrans := func() uint32 {
		raw, err := p.c.(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var info *unix.TCPInfo
		raw.Control(func(fd uintptr) { info, err = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) })
		if err != nil {
			t.Fatal(err)
		}
		return info.Total_retrans
	}
	before := retrans()
	d := start(t, node, Rule{Veth: web.Veth, Direction: faults.From, Latency: 2 * time.Second})
	p.c.SetDeadline(time.Now().Add(5 * time.Second))
	b := []byte{1}
	if _, err := p.c.Write(b); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	select {
	case <-p.stamps:
		t.Fatal("the byte was not held")
	default:
	}
	t0 := time.Now()
	stop(t, d)
	if _, err := p.c.Read(b); err != nil {
		t.Fatal(err)
	}
	<-p.stamps
	if el, n := time.Since(t0), retrans()-before; el > time.Second || n != 0 {
		t.Errorf("answer %v after Close, %d retransmissions: want it at once, none", el, n)
	}
}

// A Delayer per pod in one namespace: each binds a queue of its own.
func vethTwoInOneNamespace(t *testing.T, v *veth) {
	node, web, caller, baseTo, baseBack, probed, within, floor := v.node, v.web, v.caller, v.baseTo, v.baseBack, v.probed, v.within, v.floor
	d1 := start(t, node, Rule{Veth: caller.Veth, Direction: faults.To, Latency: latency})
	d2 := start(t, node, Rule{Veth: web.Veth, Direction: faults.To, Latency: 2 * latency})
	if d1.queue == d2.queue {
		t.Fatalf("both on queue %d", d1.queue)
	}
	const n = 20
	to, back, raw, wait := probed(t, n)
	within(t, "caller's delay", to, baseTo, latency, wait, n)
	within(t, "server's delay", back, baseBack, 2*latency, wait, n)
	floor(t, "two in one namespace", raw, latency, 2*latency)
	stop(t, d2)
	stop(t, d1)
}

// Jitter on the server's answers only: the back leg spreads as the distribution
// does. The relay's and this machine's own error on a leg are measured first, as
// the added delay of legs under a constant delay less that delay; each jittered
// leg is then a draw plus such an error. The legs' distribution must match that
// sum's (a sample of draws each paired with a measured error) by a two-sample
// Kolmogorov–Smirnov test at alpha 1e-4, which a correct relay fails once in
// 10,000 runs, whatever this machine's noise. With 400 legs it tells a jitter
// twice too wide (a distance of 0.25 uniform, 0.15 normal) or a bias of 0.5 ms
// (0.125, 0.20) from the right one: the critical distance is 0.114. Every leg is
// also at least its draw, which a relay letting packets go early fails.
func vethJitter(t *testing.T, v *veth) {
	node, web, p, baseBack := v.node, v.web, v.p, v.baseBack
	const n = 400
	d := start(t, node, Rule{Veth: web.Veth, Direction: faults.To, Latency: latency})
	_, _, raw := p.legs(t, n)
	stop(t, d)
	var errs []float64
	for _, r := range raw {
		errs = append(errs, float64(r[1]-baseBack-latency))
	}
	slices.Sort(errs)
	t.Logf("the relay's and this machine's error on a %v leg: p10 %.3f, p50 %.3f, p90 %.3f, max %.3f ms", latency, errs[n/10]/ms, errs[n/2]/ms, errs[9*n/10]/ms, errs[n-1]/ms)
	for _, c := range []struct {
		dist   string
		jitter time.Duration
		lo     time.Duration // the smallest draw
	}{
		{scenario.JitterUniform, 2 * time.Millisecond, latency - 2*time.Millisecond},
		{scenario.JitterNormal, time.Millisecond, 0},
	} {
		d := start(t, node, Rule{Veth: web.Veth, Direction: faults.To, Latency: latency, Jitter: c.jitter, Distribution: c.dist})
		_, _, raw := p.legs(t, n)
		stop(t, d)
		var added []float64
		for i, r := range raw {
			if r[1] < c.lo {
				t.Errorf("%s: leg %d back took %v, less than the smallest delay %v: a packet went early", c.dist, i, r[1], c.lo)
			}
			added = append(added, float64(r[1]-baseBack))
		}
		const m = 20 * n
		rng := sim.Stream(1, "delay/test/jitter/"+c.dist)
		var want []float64
		for i := range m {
			want = append(want, float64(draw(rng, latency, c.jitter, c.dist))+errs[i%n])
		}
		dist, crit := ksDistance(added, want), ksCritical(1e-4, n, m)
		t.Logf("%s ±%v: Kolmogorov–Smirnov distance %.3f to draws plus this machine's measured error (critical %.3f)", c.dist, c.jitter, dist, crit)
		if dist > crit {
			slices.Sort(added)
			t.Errorf("%s: the legs' added delay (p10 %.3f, p50 %.3f, p90 %.3f ms) is not distributed as the draws plus the error measured under a constant delay: KS distance %.3f over the critical %.3f at alpha 1e-4", c.dist, added[n/10]/ms, added[n/2]/ms, added[9*n/10]/ms, dist, crit)
		}
	}
}

func TestKSDistance(t *testing.T) {
	for _, c := range []struct {
		a, b []float64
		want float64
	}{
		{[]float64{1, 2, 3}, []float64{1, 2, 3}, 0},
		{[]float64{1, 2}, []float64{3, 4}, 1},
		{[]float64{1, 2, 3, 4}, []float64{3, 4, 5, 6}, 0.5},
		{[]float64{1, 1, 2}, []float64{1, 2, 2}, 1.0 / 3},
	} {
		if got := ksDistance(c.a, c.b); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("ksDistance(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	// Table values of the two-sided Kolmogorov distribution: c(0.05) = 1.358, c(0.001) = 1.949.
	if got := ksCritical(0.05, 1e9, 1e9) * math.Sqrt(5e8); math.Abs(got-1.358) > 1e-3 {
		t.Errorf("c(0.05) = %.4f, want 1.358", got)
	}
	if got := ksCritical(0.001, 1e9, 1e9) * math.Sqrt(5e8); math.Abs(got-1.949) > 1e-3 {
		t.Errorf("c(0.001) = %.4f, want 1.949", got)
	}
}
