// Package delay holds packets crossing a pod's veth for a one-way delay with jitter,
// in userspace, since this kernel has no tc netem. iptables' NFQUEUE target hands
// each packet's metadata to this process over nfnetlink_queue (the nft queue
// statement needs CONFIG_NFT_QUEUE, which this kernel lacks); a timer thread issues
// each packet's accept verdict when its delay is over. As with netem, every packet
// draws its own delay, so with jitter packets overtake each other.
//
// Rules and the queue live in one node's network namespace, on the node's end of a
// pod's veth: nothing touches the host's namespace, and deleting the node's
// namespace removes whatever a crashed run left.
package delay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	nfqueue "github.com/florianl/go-nfqueue/v2"
	"golang.org/x/sys/unix"

	"trafficlab/emulate/faults"
	"trafficlab/emulate/timerthread"
	"trafficlab/emulate/topo"
	"trafficlab/scenario"
	"trafficlab/sim"
)

// Rule delays the packets crossing one pod's veth in a direction.
type Rule struct {
	// Veth is the node's end of the pod's veth (topo.Pod.Veth).
	Veth string
	// Direction, as scenario.DirectionTo and DirectionFrom define it: faults.To
	// delays the packets the pod sends, faults.From those it receives, faults.Both
	// (or "") both, each direction drawing from a stream of its own.
	Direction string
	// Latency is the one-way delay; Jitter varies it per packet, uniform in ±Jitter
	// or, with Distribution scenario.JitterNormal, normal with Jitter as its standard
	// deviation (tc-netem(8)).
	Latency, Jitter time.Duration
	// Distribution is scenario.JitterUniform (also "") or scenario.JitterNormal.
	Distribution string
}

// Config is one node's delays.
type Config struct {
	// NS is the node's network namespace as `ip netns` names it (topo's NodeNS).
	NS string
	// Seed derives each rule's random stream: sim.Stream(Seed, "delay/VETH/DIR").
	Seed  int64
	Rules []Rule
}

// Stats is what a Delayer did.
type Stats struct {
	// Delayed counts the packets held and accepted, including those Close released
	// early.
	Delayed uint64
	// Dropped counts packets the kernel dropped because the queue was full
	// (maxQueueLen) or this process's socket buffer was (queue_dropped and
	// queue_user_dropped of /proc/net/netfilter/nfnetlink_queue).
	Dropped uint64
	// MaxLate and MeanLate are how long after the time its delay draw asked for a
	// packet's accept verdict had been issued: the timer thread's wake-up beyond
	// Lead, plus the verdict call, in which the kernel carries the packet on through
	// the node's stack. Never negative: no verdict goes out early but Close's. The
	// time the kernel took to hand the packet to this process comes on top.
	MaxLate, MeanLate time.Duration
	// Lead is how early the timer thread now wakes for a packet: a low quantile of
	// its recent wake-up delays, which it spins out when it wakes sooner.
	Lead time.Duration
	// Spun is the CPU time the timer thread spent spinning out leads.
	Spun time.Duration
}

// Delayer holds the packets of one node's rules until Close.
type Delayer struct {
	ns, chain string
	queue     uint16
	rules     []rule
	// byHook finds a packet's rule from the hook and interface nfqueue reports.
	byHook map[hookDev]*rule
	epoch  time.Time
	nf     *nfqueue.Nfqueue
	cancel context.CancelFunc
	// efd is an eventfd that wakes the timer thread when a packet is due before the
	// time it sleeps to.
	efd int
	// proc is this namespace's /proc/net/netfilter/nfnetlink_queue, opened from
	// inside it: read later from any thread, it still shows this namespace.
	proc *os.File
	done chan struct{} // closed when the timer thread ends
	// releaseP gives back the P timerthread.Reserve added for the timer thread.
	releaseP func()

	mu      sync.Mutex
	held    held
	wakeAt  time.Duration // when the timer thread wakes unless woken
	closing bool          // release everything at once
	stop    bool          // the timer thread ends once nothing is held
	stats   Stats
	sumLate time.Duration
	onTime  uint64        // packets released at or after their due time
	lead    time.Duration // see Stats.Lead
	wakeups wakeups       // the timer thread's, for lead
	err     error         // first failure of the read loop or of a verdict

	closeOnce sync.Once
	closeErr  error
}

// rule is a Rule for one direction, with its interface and random stream.
type rule struct {
	veth, dir       string
	latency, jitter time.Duration
	distribution    string
	rng             *rand.Rand
}

type hookDev struct {
	hook    uint8
	ifindex uint32
}

const (
	// firstQueue is the first nfqueue number tried. nfnetlink_queue keeps its queues
	// per network namespace (its pernet state in net/netfilter/nfnetlink_queue.c;
	// checked on this kernel: two namespaces bind the same number at once), so
	// Delayers of different nodes never collide; a second Delayer in the same
	// namespace is refused the number (EPERM) and takes the next.
	firstQueue = 7100
	queueTries = 16
	// maxQueueLen bounds the packets the kernel holds for a Delayer. Past it the
	// kernel drops (no NFQA_CFG_F_FAIL_OPEN), as netem drops past its limit
	// (tc-netem(8)), and Stats counts the drops. Failing open would let the excess
	// through undelayed, ahead of the held packets, which a measurement would take
	// for a faster network rather than an overloaded emulator. 16384 is about half
	// a second of the 34k packets/s this relay sustained on a 2-core machine; a 5 ms
	// delay at that rate holds some 170.
	maxQueueLen = 16384
	// readBuffer is the netlink socket's receive buffer: thousands of packet
	// messages if the read loop stalls, where the default (net.core.rmem_default,
	// 208 KiB) holds a few hundred.
	readBuffer = 8 << 20
	// forever stands for "no packet held" in wakeAt.
	forever = time.Duration(1<<63 - 1)
	// drainTimeout bounds how long Close waits for packets already queued in the
	// kernel to come through; they take microseconds once the rules are gone.
	drainTimeout = 2 * time.Second
	closeTimeout = 10 * time.Second
)

var runs atomic.Int32

// Start binds an nfqueue in the node's namespace and adds the rules that queue the
// veths' packets to it. ctx bounds the setup; the Delayer runs until Close.
func Start(ctx context.Context, cfg Config) (*Delayer, error) {
	rules, err := expand(cfg)
	if err != nil {
		return nil, err
	}
	d := &Delayer{
		ns:     cfg.NS,
		chain:  fmt.Sprintf("%s%d-%d", chainPrefix, os.Getpid(), runs.Add(1)),
		rules:  rules,
		byHook: map[hookDev]*rule{},
		epoch:  time.Now(),
		wakeAt: forever,
		done:   make(chan struct{}),
	}
	if d.efd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return nil, fmt.Errorf("delay: eventfd: %w", err)
	}
	if err := topo.InNetns(cfg.NS, d.open); err != nil {
		d.free()
		return nil, err
	}
	d.releaseP = timerthread.Reserve()
	go d.release()
	if err := topo.Exec(ctx, d.ns, restoreScript(d.chain, d.queue, d.rules, false), "iptables-restore", "-w", iptablesWait, "--noflush"); err != nil {
		d.Close()
		return nil, fmt.Errorf("delay: %w", err)
	}
	return d, nil
}

// expand validates cfg and splits each rule into its directions.
func expand(cfg Config) ([]rule, error) {
	if cfg.NS == "" {
		return nil, errors.New("delay: no network namespace")
	}
	var out []rule
	seen := map[string]bool{}
	for _, r := range cfg.Rules {
		if r.Veth == "" || r.Latency < 0 || r.Jitter < 0 {
			return nil, fmt.Errorf("delay: rule %+v: want a veth and a latency and jitter of at least 0", r)
		}
		if r.Distribution != "" && r.Distribution != scenario.JitterUniform && r.Distribution != scenario.JitterNormal {
			return nil, fmt.Errorf("delay: rule %+v: distribution %q: want uniform or normal", r, r.Distribution)
		}
		var dirs []string
		switch r.Direction {
		case faults.To, faults.From:
			dirs = []string{r.Direction}
		case faults.Both, "":
			dirs = []string{faults.To, faults.From}
		default:
			return nil, fmt.Errorf("delay: rule %+v: direction %q: want to, from or both", r, r.Direction)
		}
		for _, dir := range dirs {
			name := r.Veth + "/" + dir
			if seen[name] {
				return nil, fmt.Errorf("delay: two rules delay %s %s", dir, r.Veth)
			}
			seen[name] = true
			out = append(out, rule{veth: r.Veth, dir: dir, latency: r.Latency, jitter: r.Jitter,
				distribution: r.Distribution, rng: sim.Stream(cfg.Seed, "delay/"+name)})
		}
	}
	if len(out) == 0 {
		return nil, errors.New("delay: no rules")
	}
	return out, nil
}

// open runs inside the node's namespace: it finds the veths and binds the queue, so
// the netlink socket belongs to the namespace.
func (d *Delayer) open() error {
	for i := range d.rules {
		r := &d.rules[i]
		ifc, err := net.InterfaceByName(r.veth)
		if err != nil {
			return fmt.Errorf("delay: veth %s in %s: %w", r.veth, d.ns, err)
		}
		d.byHook[hookDev{hooks[r.dir].nf, uint32(ifc.Index)}] = r
	}
	// thread-self, not self: /proc/self/net shows the namespace of the process's
	// main thread, this one is the thread's.
	proc, err := os.Open("/proc/thread-self/net/netfilter/nfnetlink_queue")
	if err != nil {
		return fmt.Errorf("delay: %w", err)
	}
	d.proc = proc
	for q := uint16(firstQueue); q < firstQueue+queueTries; q++ {
		nf, err := nfqueue.Open(&nfqueue.Config{
			NfQueue:     q,
			MaxQueueLen: maxQueueLen,
			// Metadata only: the packet id, hook and interfaces are all a delay
			// needs. (NFQNL_COPY_NONE would refuse to queue at all.)
			Copymode: nfqueue.NfQnlCopyMeta,
			// GSO packets are queued whole rather than segmented first, as netem
			// delays a GSO packet as one: fewer verdicts, same bytes.
			Flags:    nfqueue.NfQaCfgFlagGSO,
			AfFamily: unix.AF_INET, // topo's addresses are IPv4 only
		})
		if err != nil {
			return fmt.Errorf("delay: nfqueue: %w", err)
		}
		if err := tuneSocket(nf); err != nil {
			nf.Close()
			return err
		}
		ctx, cancel := context.WithCancel(context.Background())
		err = nf.RegisterWithErrorFunc(ctx, d.handle, func(err error) int {
			if ctx.Err() == nil {
				d.fail(fmt.Errorf("delay: reading queue %d in %s: %w", q, d.ns, err))
			}
			// Stop reading: the library then unbinds the queue, and --queue-bypass
			// lets later packets through undelayed.
			return 1
		})
		if err == nil {
			d.nf, d.queue, d.cancel = nf, q, cancel
			return nil
		}
		cancel()
		nf.Close()
		if !errors.Is(err, unix.EPERM) {
			return fmt.Errorf("delay: nfqueue %d in %s: %w", q, d.ns, err)
		}
	}
	return fmt.Errorf("delay: nfqueue %d to %d all taken in %s", firstQueue, firstQueue+queueTries-1, d.ns)
}

// tuneSocket enlarges the socket's receive buffer (FORCE: past net.core.rmem_max, as
// root may) and sets NETLINK_NO_ENOBUFS: a full buffer then costs the packets the
// kernel could not hand over, which it counts in queue_user_dropped, instead of
// failing the read loop (netlink(7)).
func tuneSocket(nf *nfqueue.Nfqueue) error {
	raw, err := nf.Con.SyscallConn()
	if err != nil {
		return fmt.Errorf("delay: %w", err)
	}
	var serr error
	err = raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, readBuffer)
		if serr == nil {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_NETLINK, unix.NETLINK_NO_ENOBUFS, 1)
		}
	})
	if err = errors.Join(err, serr); err != nil {
		return fmt.Errorf("delay: netlink socket options: %w", err)
	}
	return nil
}

// handle is called by the read loop for each queued packet: it draws the packet's
// delay and holds it.
func (d *Delayer) handle(a nfqueue.Attribute) int {
	now := d.now()
	if a.PacketID == nil {
		return 0
	}
	var dev *uint32
	if a.Hook != nil {
		switch *a.Hook {
		case nfPreRouting:
			dev = a.InDev
		case nfPostRouting:
			dev = a.OutDev
		}
	}
	var delay time.Duration
	if dev != nil {
		if r := d.byHook[hookDev{*a.Hook, *dev}]; r != nil {
			delay = draw(r.rng, r.latency, r.jitter, r.distribution)
		}
	}
	d.mu.Lock()
	lead := min(d.lead, delay)
	at := now + delay - lead
	d.held.push(packet{wake: at, id: *a.PacketID, lead: int32(lead)})
	sooner := at < d.wakeAt
	if sooner {
		d.wakeAt = at
	}
	d.mu.Unlock()
	if sooner {
		d.wake()
	}
	return 0
}

func (d *Delayer) now() time.Duration { return time.Since(d.epoch) }

// wake interrupts the timer thread's sleep.
func (d *Delayer) wake() {
	var one = [8]byte{1}
	unix.Write(d.efd, one[:]) // EAGAIN only when the counter is full: a wake is pending
}

func (d *Delayer) fail(err error) {
	d.mu.Lock()
	if d.err == nil {
		d.err = err
	}
	d.mu.Unlock()
}

// Stats reports what the Delayer did so far.
func (d *Delayer) Stats() Stats {
	d.mu.Lock()
	running := !d.stop
	d.mu.Unlock()
	var dropped uint64
	if running {
		_, dropped, _ = d.queueState()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.stats
	if !d.stop { // else Close stored the last count before unbinding the queue
		s.Dropped = dropped
	}
	if d.onTime > 0 {
		s.MeanLate = d.sumLate / time.Duration(d.onTime)
	}
	s.Lead = d.lead
	return s
}

// queueState reads this queue's line of the namespace's nfnetlink_queue file, whose
// columns are (nfqnl_seq_show, net/netfilter/nfnetlink_queue.c): queue number, peer
// port id, packets waiting for a verdict, copy mode, copy range, packets dropped for a
// full queue, packets dropped for a full socket, last packet id, 1.
func (d *Delayer) queueState() (waiting, dropped uint64, err error) {
	b, err := io.ReadAll(io.NewSectionReader(d.proc, 0, 1<<20))
	if err != nil {
		return 0, 0, fmt.Errorf("delay: %w", err)
	}
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) < 7 || f[0] != strconv.Itoa(int(d.queue)) {
			continue
		}
		var n [3]uint64
		for i, col := range []int{2, 5, 6} {
			if n[i], err = strconv.ParseUint(f[col], 10, 64); err != nil {
				return 0, 0, fmt.Errorf("delay: nfnetlink_queue line %q: %w", line, err)
			}
		}
		return n[0], n[1] + n[2], nil
	}
	return 0, 0, nil
}

// Close removes the rules, lets every held packet go at once (none is dropped), and
// stops. It returns the first error of the run or of the removal; later calls return
// the same.
func (d *Delayer) Close() error {
	d.closeOnce.Do(func() { d.closeErr = d.close() })
	return d.closeErr
}

func (d *Delayer) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	err := topo.Exec(ctx, d.ns, restoreScript(d.chain, d.queue, d.rules, true), "iptables-restore", "-w", iptablesWait, "--noflush")
	if err != nil {
		err = fmt.Errorf("delay: removing rules: %w", err)
	}
	d.mu.Lock()
	d.closing = true
	d.mu.Unlock()
	d.wake()
	// Packets queued before the rules went may still be on their way to the read
	// loop. Unbinding the queue would drop them (instance_destroy flushes with
	// NF_DROP, net/netfilter/nfnetlink_queue.c), so wait until the kernel holds none.
	var dropped uint64
	for deadline := time.Now().Add(drainTimeout); ; time.Sleep(time.Millisecond) {
		waiting, dr, e := d.queueState()
		dropped = dr
		if e != nil || waiting == 0 || time.Now().After(deadline) {
			err = errors.Join(err, e)
			break
		}
	}
	d.mu.Lock()
	d.stop = true
	d.stats.Dropped = dropped
	d.mu.Unlock()
	d.wake()
	<-d.done
	d.releaseP()
	d.free()
	d.mu.Lock()
	defer d.mu.Unlock()
	return errors.Join(err, d.err)
}

// free unbinds the queue and closes the Delayer's files; the timer thread has ended
// or never started.
func (d *Delayer) free() {
	if d.nf != nil {
		d.cancel()
		d.nf.Close()
	}
	if d.proc != nil {
		d.proc.Close()
	}
	unix.Close(d.efd)
}
