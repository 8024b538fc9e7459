package emulate

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"trafficlab/emulate/serve"
	"trafficlab/emulate/topo"
	"trafficlab/result"
)

// Services that call services: each pod's `trafficlab serve` makes its calls for
// real to the called Services' ClusterIPs, through the same kube-proxy rules, and
// writes what it did when it exits. Once the load is over emulate ends every pod
// that still runs and adds their figures up into the Result's services and edges,
// as simulate counts them. A pod killed (SIGKILL) writes nothing: its calls are
// missing from the figures.

// figuresWait bounds how long the pods get to exit and write their figures.
const figuresWait = 10 * time.Second

// serveArgs are the flags of pod name's `trafficlab serve` beyond its spec: gRPC
// when its clients speak it; with calls, its service, each called Service's
// address and where its figures go.
func (c *cluster) serveArgs(service, name string) []string {
	var args []string
	if grpcCallers(c.sc, service) {
		args = append(args, "--grpc")
	}
	if c.figures == "" {
		return args
	}
	args = append(args, "--service", service, "--figures", filepath.Join(c.figures, name+".json"))
	for _, to := range c.sc.Spec.Services[serviceIndex(c.sc, service)].Pod.Callees() {
		if c.sc.Spec.Services[serviceIndex(c.sc, to)].Headless() {
			args = append(args, "--call", to+"="+headlessTarget(to), "--dns", c.dns.addr())
			continue
		}
		args = append(args, "--call", fmt.Sprintf("%s=http://%s:%d/", to, topo.ServiceIP(serviceIndex(c.sc, to)), servicePort))
	}
	return args
}

// addCalls ends the pods still running (SIGTERM: each writes its figures as it
// exits) and adds every pod's figures to r. Callers end before the services they
// call, so that no call fails for the run's end.
func (c *cluster) addCalls(r *result.Result) {
	c.mu.Lock()
	servers := append([]*server(nil), c.servers...)
	c.closing = true // the pods' exits are the run's end, not pod changes
	c.mu.Unlock()
	level := c.sc.CallLevels()
	deadline := time.After(figuresWait)
	for l := 0; l <= len(c.sc.Spec.Services); l++ {
		var ending []*server
		for _, s := range servers {
			if level[s.service] == l {
				_ = s.cmd.Process.Signal(syscall.SIGTERM)
				ending = append(ending, s)
			}
		}
		for _, s := range ending {
			select {
			case <-s.exited:
			case <-deadline:
			}
		}
	}
	var figs []serve.Figures
	var errs []error
	for _, s := range servers {
		data, err := os.ReadFile(filepath.Join(c.figures, s.name+".json"))
		if errors.Is(err, os.ErrNotExist) {
			continue // killed: its figures are lost
		}
		var f serve.Figures
		if err == nil {
			err = json.Unmarshal(data, &f)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("pod %s's figures: %w", s.name, err))
			continue
		}
		figs = append(figs, f)
	}
	c.mu.Lock()
	c.errs = append(c.errs, errs...)
	c.mu.Unlock()
	serve.AddFigures(r, c.sc, figs)
}
