// Package emutest holds what emulate's tests share: the gate that decides whether a
// test may build namespaces and rules for real, and a serve pod started inside a
// namespace. Only tests import it.
package emutest

import (
	"net"
	"net/netip"
	"os"
	"os/exec"
	"testing"

	"trafficlab/emulate/serve"
	"trafficlab/scenario"
)

// NeedRoot skips a test that needs root and these tools on PATH when it cannot run
// for real; with TRAFFICLAB_EMULATE_TEST=require (as ./test.sh sets it) it fails
// instead, so CI cannot pass by skipping the real thing.
func NeedRoot(t testing.TB, tools ...string) {
	t.Helper()
	cannot := func(why string) {
		t.Helper()
		msg := "real emulate test not run: " + why
		if os.Getenv("TRAFFICLAB_EMULATE_TEST") == "require" {
			t.Fatal(msg)
		}
		t.Skip(msg + " (TRAFFICLAB_EMULATE_TEST=require makes this a failure)")
	}
	if os.Geteuid() != 0 {
		cannot("needs root (network namespaces, netfilter, cgroups)")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			cannot(tool + " is not installed (./test.sh installs iproute2, nftables, iptables, conntrack)")
		}
	}
}

// Pod is a pod spec written as the scenario writes spec.services[].pod.
func Pod(t testing.TB, yaml string) *scenario.Pod {
	t.Helper()
	pod, diags := serve.ParsePod("pod", []byte(yaml))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return pod
}

// Serve starts pod's app as the pod named name, listening on addr inside network
// namespace ns, and terminates it when the test ends. inNetns is topo.InNetns,
// passed in so that topo's own tests can use this package.
func Serve(t testing.TB, inNetns func(string, func() error) error, ns, name string, addr netip.AddrPort, pod *scenario.Pod) *serve.Server {
	t.Helper()
	s, err := serve.New(serve.Config{Pod: pod, Name: name, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var ln net.Listener
	if err := inNetns(ns, func() (err error) { ln, err = net.Listen("tcp", addr.String()); return err }); err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(s.Terminate)
	return s
}
