// Package topo builds an emulated cluster's network out of Linux network
// namespaces: one per node, one per pod, and a fabric between the nodes. Pods are
// wired as a routed CNI wires them (the CNI ptp plugin, Calico): a veth pair per pod,
// the pod's address a /32, its next hop the node side of its veth, so every packet a
// pod sends crosses its node's IP stack, where kube-proxy's rules run. Nodes reach
// each other's pod CIDRs through the fabric, a bridge in a namespace of its own.
// Nothing is created in the host's namespace: deleting the run's namespaces removes
// every link, address, route and rule with them.
package topo

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Prefix starts the name of every namespace any run creates; a run's own names go on
// with its process id and a sequence number: tl-PID-SEQ-.
const Prefix = "tl-"

var runs atomic.Int32

// Pod is one pod's place in the network.
type Pod struct {
	Name, Node string
	// NS is the pod's network namespace, for `ip netns exec` and InNetns.
	NS string
	IP netip.Addr
	// Veth is the node's end of the pod's veth pair, in the node's namespace: where
	// faults between the pod and the rest of the cluster are applied.
	Veth string
	// node and slot locate it in the address plan.
	node, slot int
}

// Topology is a built network. Its methods may be called from several goroutines.
type Topology struct {
	prefix string
	fabric string
	// cc is every node's and pod's TCP congestion control; "" leaves the host's.
	// allowed is the algorithm the run added to the host's allowed list, if any.
	cc, allowed string

	mu    sync.Mutex
	nodes []node
	pods  map[string]*Pod
}

type node struct {
	name, ns string
	slots    []bool // pod address slots in use
}

// Build creates the fabric and one namespace per node, named after nodes, with
// routes between their pod CIDRs. It needs root and iproute2, and refuses when the
// host uses addresses in Reserved. On an error it removes what it made.
func Build(nodes []string) (t *Topology, err error) {
	if len(nodes) == 0 || len(nodes) > MaxNodes {
		return nil, fmt.Errorf("emulate needs 1 to %d nodes, not %d", MaxNodes, len(nodes))
	}
	if err := checkHostFree(); err != nil {
		return nil, err
	}
	t = &Topology{prefix: fmt.Sprintf("%s%d-%d-", Prefix, os.Getpid(), runs.Add(1)), pods: map[string]*Pod{}}
	defer func() {
		if err != nil {
			t.Close()
			t = nil
		}
	}()
	t.fabric = t.prefix + "fabric"
	if err := ip("netns", "add", t.fabric); err != nil {
		return t, err
	}
	fabric := []string{"link set lo up", "link add br0 type bridge", "link set br0 up"}
	for i, name := range nodes {
		n := node{name: name, ns: t.prefix + "node-" + name}
		t.nodes = append(t.nodes, n)
		if err := ip("netns", "add", n.ns); err != nil {
			return t, err
		}
		cmds := []string{
			"link set lo up",
			fmt.Sprintf("link add eth0 type veth peer name n%d netns %s", i, t.fabric),
			fmt.Sprintf("addr add %s/%d dev eth0", nodeAddr(i), fabricNet.Bits()),
			"link set eth0 up",
		}
		if err := ipBatch(n.ns, cmds); err != nil {
			return t, err
		}
		// A node routes its pods' packets on: it is their router.
		if err := sysctl(n.ns, "net/ipv4/ip_forward", "1"); err != nil {
			return t, err
		}
		fabric = append(fabric, fmt.Sprintf("link set n%d master br0", i), fmt.Sprintf("link set n%d up", i))
	}
	if err := ipBatch(t.fabric, fabric); err != nil {
		return t, err
	}
	for i, n := range t.nodes {
		// A node's own connections to a ClusterIP are routed before nat output
		// rewrites them, so the Service CIDR needs a route, as a real node's default
		// route gives it.
		// Addresses of the node's pod range that no pod holds are dropped without an
		// answer, as Calico's blackhole route for its local IPAM blocks does: a
		// packet to a deleted pod's address gets no reply once its veth is gone.
		routes := []string{fmt.Sprintf("route add %s dev eth0", serviceNet), fmt.Sprintf("route add blackhole %s", podCIDR(i))}
		for j := range t.nodes {
			if j != i {
				routes = append(routes, fmt.Sprintf("route add %s via %s dev eth0", podCIDR(j), nodeAddr(j)))
			}
		}
		if err := ipBatch(n.ns, routes); err != nil {
			return t, err
		}
	}
	return t, t.waitFabric()
}

// fabricWait bounds how long Build waits for the fabric to pass packets.
const fabricWait = 5 * time.Second

// waitFabric returns once every node reaches every other across the fabric. A
// bridge and veths just made drop what is sent over them for about a second (the
// first ARP request goes unanswered, and the queued packets wait for the kernel's
// retry 1 s later): a connection opened then would look like a lost SYN. Real
// nodes have long talked to each other. Each pair is probed with a TCP SYN to a
// port nothing listens on, which comes back refused once the path works, and
// leaves both nodes knowing each other's address.
func (t *Topology) waitFabric() error {
	deadline := time.Now().Add(fabricWait)
	for i := range t.nodes {
		err := InNetns(t.nodes[i].ns, func() error {
			for j := i + 1; j < len(t.nodes); j++ {
				for {
					conn, err := net.DialTimeout("tcp", netip.AddrPortFrom(nodeAddr(j), 9).String(), 50*time.Millisecond)
					if conn != nil {
						conn.Close()
					}
					var ne net.Error
					if !errors.As(err, &ne) || !ne.Timeout() {
						break // refused (or, oddly, accepted): the path works
					}
					if time.Now().After(deadline) {
						return fmt.Errorf("the fabric between nodes %s and %s passes no packets after %v", t.nodes[i].name, t.nodes[j].name, fabricWait)
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Prefix is the start of every name of this run: tl-PID-SEQ-.
func (t *Topology) Prefix() string { return t.prefix }

// NodeNS is the network namespace of the named node; "" if there is none.
func (t *Topology) NodeNS(name string) string {
	for _, n := range t.nodes {
		if n.name == name {
			return n.ns
		}
	}
	return ""
}

// AddPod creates a pod's namespace on the named node, with its address and routes.
func (t *Topology) AddPod(name, nodeName string) (*Pod, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, dup := t.pods[name]; dup {
		return nil, fmt.Errorf("pod %s exists", name)
	}
	ni := -1
	for i, n := range t.nodes {
		if n.name == nodeName {
			ni = i
		}
	}
	if ni < 0 {
		return nil, fmt.Errorf("pod %s: no node %s", name, nodeName)
	}
	n := &t.nodes[ni]
	slot := -1
	for s, used := range n.slots {
		if !used {
			slot = s
			break
		}
	}
	if slot < 0 {
		if len(n.slots) == MaxPodsPerNode {
			return nil, fmt.Errorf("pod %s: node %s has %d pods, the most its /24 holds", name, nodeName, MaxPodsPerNode)
		}
		slot = len(n.slots)
		n.slots = append(n.slots, false)
	}
	veth := fmt.Sprintf("p%d", slot)
	p := &Pod{Name: name, Node: nodeName, NS: t.prefix + "pod-" + name, IP: podAddr(ni, slot), Veth: veth, node: ni, slot: slot}
	if err := ip("netns", "add", p.NS); err != nil {
		return nil, err
	}
	// The node side carries the pods' gateway address, as the CNI ptp plugin gives
	// the host side of each veth the gateway: it answers the pod's ARP for it.
	err := ipBatch(n.ns, []string{
		fmt.Sprintf("link add %s type veth peer name eth0 netns %s", veth, p.NS),
		fmt.Sprintf("addr add %s/32 dev %s scope link", podGateway, veth),
		fmt.Sprintf("link set %s up", veth),
		fmt.Sprintf("route add %s/32 dev %s", p.IP, veth),
	})
	if err == nil && t.cc != "" {
		err = sysctl(p.NS, "net/ipv4/tcp_congestion_control", t.cc)
	}
	if err == nil {
		err = ipBatch(p.NS, []string{
			"link set lo up",
			fmt.Sprintf("addr add %s/32 dev eth0", p.IP),
			"link set eth0 up",
			fmt.Sprintf("route add %s dev eth0 scope link", podGateway),
			fmt.Sprintf("route add default via %s dev eth0", podGateway),
		})
	}
	if err != nil {
		ip("-netns", n.ns, "link", "del", veth) // may not exist yet: nothing to report
		ip("netns", "del", p.NS)
		return nil, err
	}
	n.slots[slot] = true
	t.pods[name] = p
	return p, nil
}

// SetCongestionControl makes name (cubic, reno) the TCP congestion control of every
// node's namespace and of every pod's added from now on. A new namespace takes the
// host's (net.ipv4.tcp_congestion_control is per namespace since Linux 4.15 and
// starts from the initial namespace's), which may be another, such as bbr. A
// namespace other than the initial one may only choose an algorithm the host lists
// in net.ipv4.tcp_allowed_congestion_control (tcp_cong.c,
// tcp_set_default_congestion_control: EPERM otherwise); one it does not list is
// added for the run, and Close takes it out again.
func (t *Topology) SetCongestionControl(name string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	allowed, err := os.ReadFile(allowedCC)
	if err != nil {
		return err
	}
	if !slices.Contains(strings.Fields(string(allowed)), name) {
		if err := os.WriteFile(allowedCC, []byte(strings.TrimSpace(string(allowed))+" "+name), 0o644); err != nil {
			return fmt.Errorf("allowing congestion control %s: %w", name, err)
		}
		t.allowed = name
	}
	for _, n := range t.nodes {
		if err := sysctl(n.ns, "net/ipv4/tcp_congestion_control", name); err != nil {
			return fmt.Errorf("congestion control %s: %w", name, err)
		}
	}
	t.cc = name
	return nil
}

// RemovePod disconnects a pod and deletes its namespace. The veth goes first, at
// once: a namespace outlives its name while a socket in it is open, and its devices
// are torn down later in the kernel's own time, so the slot could not be reused.
func (t *Topology) RemovePod(name string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.pods[name]
	if !ok {
		return fmt.Errorf("no pod %s", name)
	}
	if err := ip("-netns", t.nodes[p.node].ns, "link", "del", p.Veth); err != nil {
		return err
	}
	if err := ip("netns", "del", p.NS); err != nil {
		return err
	}
	t.nodes[p.node].slots[p.slot] = false
	delete(t.pods, name)
	return nil
}

// Close deletes every namespace of the run. It goes on past errors and returns the
// first.
func (t *Topology) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	names, err := namespaces(t.prefix)
	for _, ns := range names {
		if e := ip("netns", "del", ns); e != nil && err == nil {
			err = e
		}
	}
	t.pods = map[string]*Pod{}
	if t.allowed != "" {
		if e := disallow(t.allowed); e != nil && err == nil {
			err = e
		}
		t.allowed = ""
	}
	return err
}

// allowedCC lists the congestion control algorithms namespaces may choose.
const allowedCC = "/proc/sys/net/ipv4/tcp_allowed_congestion_control"

// disallow takes name out of the host's allowed congestion control algorithms.
func disallow(name string) error {
	data, err := os.ReadFile(allowedCC)
	if err != nil {
		return err
	}
	var keep []string
	for _, a := range strings.Fields(string(data)) {
		if a != name {
			keep = append(keep, a)
		}
	}
	return os.WriteFile(allowedCC, []byte(strings.Join(keep, " ")), 0o644)
}

// sysctl sets a network sysctl (a path under /proc/sys) inside namespace ns: the
// net subtree of /proc/sys belongs to the namespace of the thread that opens it.
func sysctl(ns, key, value string) error {
	return InNetns(ns, func() error {
		return os.WriteFile(filepath.Join("/proc/sys", key), []byte(value), 0o644)
	})
}

// Leftovers lists the namespaces of runs whose process is gone: what a crashed run
// (kill -9, a power cut) left behind.
func Leftovers() ([]string, error) {
	names, err := namespaces(Prefix)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ns := range names {
		if Stale(ns) {
			out = append(out, ns)
		}
	}
	return out, nil
}

// Stale tells whether name was made by a run (it starts with tl-PID-) whose
// process is gone. Other resources a run names with its Prefix (cgroups) are
// cleaned up by it too.
func Stale(name string) bool {
	var pid int
	if _, err := fmt.Sscanf(strings.TrimPrefix(name, Prefix), "%d-", &pid); err != nil || pid <= 0 || !strings.HasPrefix(name, Prefix) {
		return false // not ours after all
	}
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return os.IsNotExist(err)
}

// Cleanup deletes the leftovers of crashed runs and returns what it deleted.
func Cleanup() ([]string, error) {
	names, err := Leftovers()
	if err != nil {
		return nil, err
	}
	var done []string
	for _, ns := range names {
		if e := ip("netns", "del", ns); e != nil {
			if err == nil {
				err = e
			}
			continue
		}
		done = append(done, ns)
	}
	return done, err
}
