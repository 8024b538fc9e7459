package emulate

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"trafficlab/emulate/proxyrules"
	"trafficlab/emulate/topo"
	"trafficlab/emulate/userspace"
	"trafficlab/model/kubeproxy"
)

// unemulated says why emulate cannot run mode, or nil when it can. Each mode it runs
// is either the rules proxyrules writes (iptables, nftables) or the userspace
// proxier's process (emulate/userspace); a mode that is neither yet is refused.
func unemulated(mode kubeproxy.Mode) error {
	switch mode {
	case kubeproxy.Iptables, kubeproxy.Nftables, kubeproxy.Userspace:
		return nil
	case kubeproxy.IPVS:
		return errors.New("ipvs: this kernel has no IPVS (ip_vs modules); emulate runs iptables, nftables and userspace. `trafficlab simulate` models IPVS rr, lc, sh, sed and nq")
	}
	return fmt.Errorf("kube-proxy mode %s is not emulated yet; `trafficlab simulate` runs it", mode)
}

// kubeProxy is kube-proxy on every node: the rules its iptables or nftables mode
// writes, in each node's namespace, or in userspace mode a proxy process (here, a
// goroutine per Service) in each.
type kubeProxy struct {
	mode   kubeproxy.Mode
	config proxyrules.Config
	nodeNS []string
	procs  []*userspace.Proxy // userspace mode, per node
}

// startKubeProxy programs every node for services, whose Endpoints are the ready
// pods' addresses, as a settled cluster has them when a run starts.
func startKubeProxy(ctx context.Context, mode kubeproxy.Mode, net *topo.Topology, nodes []string, services []proxyrules.Service, seed int64) (*kubeProxy, error) {
	kp := &kubeProxy{mode: mode, config: proxyrules.Config{Prefix: net.Prefix()}}
	services = proxied(services)
	for _, n := range nodes {
		kp.nodeNS = append(kp.nodeNS, net.NodeNS(n))
	}
	for i, ns := range kp.nodeNS {
		if mode == kubeproxy.Userspace {
			cfg := userspace.Config{NS: ns, Seed: uint64(seed)}
			for _, s := range services {
				cfg.Services = append(cfg.Services, userspace.Service{Name: s.Name, ClusterIP: s.ClusterIP, Port: s.Port})
			}
			p, err := userspace.New(ctx, cfg)
			if err != nil {
				return kp, fmt.Errorf("kube-proxy (userspace) in %s: %w", ns, err)
			}
			kp.procs = append(kp.procs, p)
		}
		if err := kp.program(ctx, i, services); err != nil {
			return kp, fmt.Errorf("kube-proxy (%s) in %s: %w", mode, ns, err)
		}
	}
	return kp, nil
}

// close stops the userspace proxies; rules go with their namespaces.
func (kp *kubeProxy) close() error {
	var errs []error
	for _, p := range kp.procs {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// program makes node i's kube-proxy hold these Services' endpoints: a full sync of
// its rules, or its userspace proxy's endpoint lists.
func (kp *kubeProxy) program(ctx context.Context, i int, services []proxyrules.Service) error {
	services = proxied(services)
	if kp.mode != kubeproxy.Userspace {
		return proxyrules.Apply(ctx, kp.nodeNS[i], kp.mode, proxyrules.Rules{Config: kp.config, Services: services})
	}
	for _, s := range services {
		if err := kp.procs[i].SetEndpoints(s.Name, s.Endpoints); err != nil {
			return err
		}
	}
	return nil
}

// proxied are the Services kube-proxy programs: those with a ClusterIP.
func proxied(services []proxyrules.Service) []proxyrules.Service {
	return slices.DeleteFunc(slices.Clone(services), func(s proxyrules.Service) bool { return !s.ClusterIP.IsValid() })
}
