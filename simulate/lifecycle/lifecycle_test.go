package lifecycle

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"trafficlab/scenario"
	"trafficlab/sim"
)

const sec = sim.Time(time.Second)

// cluster is a fake engine: nodes with room for a number of pods, apps that stay
// busy until the test frees them, and a log of what the lifecycle asked.
type cluster struct {
	k    *sim.Kernel
	room int
	pods int32
	busy map[int32]bool
	log  []string
	l    *Pods
}

func (c *cluster) note(format string, args ...any) {
	c.log = append(c.log, fmt.Sprintf("%v ", time.Duration(c.k.Now()))+fmt.Sprintf(format, args...))
}

func (c *cluster) Bind(pp *Pending) (int32, string) {
	if c.room == 0 {
		return -1, "0/1 nodes are available"
	}
	c.room--
	c.pods++
	c.note("bind %s", pp.Name)
	return c.pods - 1, ""
}

func (c *cluster) StartupDelay(int32) sim.Time       { return 2 * sec }
func (c *cluster) Terminating(id int32)              { c.note("terminating %d", id) }
func (c *cluster) ReadyChanged(id int32, ready bool) { c.note("ready %d %v", id, ready) }
func (c *cluster) Idle(id int32) bool                { return !c.busy[id] }
func (c *cluster) Exited(id int32)                   { c.note("exited %d", id) }
func (c *cluster) Gone(id int32)                     { c.note("gone %d", id); c.room++; c.l.RoomFreed() }

// pod is a service's pod template as the scenario defaults it, with these settings.
func pod(t *testing.T, settings string) *scenario.Pod {
	t.Helper()
	src := "apiVersion: trafficlab/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  duration: 10m\n" +
		"  cluster: {nodes: [{name: n, count: 1}]}\n  services:\n  - name: web\n    replicas: 1\n" +
		"    pod:\n      serviceTime: {distribution: constant, value: 1ms}\n" + settings +
		"  clients:\n  - name: c\n    target: web\n    rate: 1/s\n"
	sc, _, diags := scenario.Load("t.yaml", []byte(src), nil)
	if diags.HasErrors() {
		t.Fatalf("%v\n%s", diags, src)
	}
	return &sc.Spec.Services[0].Pod
}

func newPods(t *testing.T, room int, settings string) (*Pods, *cluster) {
	k := sim.New()
	c := &cluster{k: k, room: room, busy: map[int32]bool{}}
	l := New(k, 1, 500*sim.Time(time.Millisecond), c)
	c.l = l
	l.AddService(pod(t, settings))
	return l, c
}

// A pod created during the run listens after its start-up delay, turns Ready after
// successThreshold probes (failing ones, while it drains, stay under
// failureThreshold), and on deletion drains: its endpoint turns terminating
// at once, SIGTERM comes after preStop, the app exits once idle, and its IP goes
// after the network's teardown.
func TestPodLivesAndDrains(t *testing.T) {
	l, c := newPods(t, 1, "      readinessProbe: {periodSeconds: 1, successThreshold: 2, failureThreshold: 10}\n"+
		"      lifecycle: {preStop: {sleep: {seconds: 3}}}\n      onSigterm: {action: drain}\n")
	l.Run()
	id, reason := l.Create(0, 0, "web-0")
	if id != 0 || reason != "" {
		t.Fatalf("create: %d %q", id, reason)
	}
	c.busy[0] = true
	l.k.Run(10 * sec)
	l.Delete(0)
	l.k.Run(20 * sec)
	if got := l.Pod(0); l.Phase(0) != Draining || got.ClosedAt != 13*sec {
		t.Fatalf("at 20 s: phase %d, %+v; want draining since SIGTERM at 13 s", l.Phase(0), *got)
	}
	c.busy[0] = false
	l.Drained(0)
	l.k.Run(30 * sec)
	want := []string{
		"0s bind web-0", "3s ready 0 true", // listening at 2 s, probes at 2 s and 3 s
		"10s terminating 0", "20s exited 0", "20s ready 0 false", "20.5s gone 0",
	}
	if !slices.Equal(c.log, want) {
		t.Errorf("got  %q\nwant %q", c.log, want)
	}
	st := l.Pod(0)
	if l.Phase(0) != Gone || st.Started != 2*sec || st.FirstReady != 3*sec || st.DeletedAt != 10*sec || st.Ended != 20*sec {
		t.Errorf("status %+v", *st)
	}
}

// A pod no node can take waits Pending with the scheduler's reason, is retried
// when room is freed once its backoff (1 s, then doubling) is over, and binds then.
func TestPendingPodWaitsForRoomAndBackoff(t *testing.T) {
	l, c := newPods(t, 1, "")
	l.Create(0, 0, "web-0")
	l.Run()
	if id, reason := l.Create(0, 0, "web-1"); id >= 0 || reason != "0/1 nodes are available" {
		t.Fatalf("create web-1: %d %q; want it pending", id, reason)
	}
	l.k.Run(sec / 2)
	l.Delete(0) // exits at once (no drain); gone after the 500 ms teardown
	l.k.Run(5 * sec)
	want := []string{
		"0s bind web-0", "0s ready 0 true",
		"500ms terminating 0", "500ms exited 0", "500ms ready 0 false", "1s gone 0", "1s bind web-1", "3s ready 1 true",
	}
	if !slices.Equal(c.log, want) {
		t.Errorf("got  %q\nwant %q", c.log, want)
	}
	if len(l.Pending()) != 0 {
		t.Errorf("still pending: %+v", l.Pending())
	}
}
