package proxyrules

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"trafficlab/model/kubeproxy"
)

// Apply programs rules into the named network namespace (one that `ip netns add`
// made), the way kube-proxy's full sync programs a node: every call writes the whole
// rule set again, so an endpoint change is applied by calling Apply with the new
// endpoints. As with kube-proxy, conntrack is left alone: established TCP connections
// keep going to the endpoint they were DNATed to, even one that is no longer listed
// (kube-proxy only clears UDP entries, pkg/proxy/conntrack/cleanup.go).
//
// Iptables mode ensures kube-proxy's jump rules in the built-in chains (iptables -N,
// -C, -I, as EnsureChain and EnsureRule do), then runs `iptables-restore --noflush
// --counters` with IptablesRestore's output. Nftables mode deletes the per-service
// chains an earlier Apply left flushed, then runs `nft -f` with NftablesScript's
// output, all in one transaction. Every command runs as `ip netns exec NETNS ...`;
// an empty namespace name is refused, so Apply never programs the host.
//
// When an endpoint change reaches a node is the caller's business (kube-proxy's sync
// periods); calls for one namespace must not overlap, as kube-proxy's syncs do not.
func Apply(ctx context.Context, netns string, mode Mode, rules Rules) error {
	if err := checkNetns(netns); err != nil {
		return err
	}
	switch mode {
	case Iptables:
		return applyIptables(ctx, netns, rules)
	case Nftables:
		return applyNftables(ctx, netns, rules)
	}
	return modeError(mode)
}

// Flush removes everything Apply wrote in the named namespace: for iptables mode the
// jump rules and every KUBE-* chain kube-proxy owns (cleanupLeftoversForFamily, plus
// the KUBE-FIREWALL copy), for nftables mode the table ip kube-proxy
// (CleanupLeftovers). Flushing a namespace with no rules is not an error.
func Flush(ctx context.Context, netns string, mode Mode) error {
	if err := checkNetns(netns); err != nil {
		return err
	}
	switch mode {
	case Iptables:
		return flushIptables(ctx, netns)
	case Nftables:
		_, err := run(ctx, netns, nil, "nft", "delete", "table", "ip", nftablesTable)
		if err != nil && !notFound(err) {
			return err
		}
		return nil
	}
	return modeError(mode)
}

func modeError(mode Mode) error {
	switch mode {
	case kubeproxy.IPVS:
		return ErrIPVSUnsupported
	case kubeproxy.Userspace:
		return ErrUserspaceHasNoRules
	}
	return fmt.Errorf("proxyrules: unknown proxy mode %q (want iptables or nftables)", mode)
}

// checkNetns accepts the name of a namespace under /var/run/netns and nothing else.
func checkNetns(name string) error {
	if name == "" || name == "." || name == ".." || len(name) > 255 || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("proxyrules: %q is not a network namespace name (rules are only ever applied inside a namespace the emulator made)", name)
	}
	return nil
}

// cmdError is a failed command with its output.
type cmdError struct {
	args   []string
	code   int
	stderr string
	err    error
}

func (e *cmdError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	return fmt.Sprintf("proxyrules: %s: %s", strings.Join(e.args, " "), msg)
}

func (e *cmdError) Unwrap() error { return e.err }

// exitCode is the command's exit status, or -1 if it did not run to an exit.
func exitCode(err error) int {
	var ce *cmdError
	if errors.As(err, &ce) {
		return ce.code
	}
	return -1
}

// notFound reports whether a command failed because the object it named is absent.
func notFound(err error) bool {
	var ce *cmdError
	return errors.As(err, &ce) && strings.Contains(ce.stderr, "No such file or directory")
}

// iptablesNotFound reports whether iptables failed because a chain, target or match it
// was given does not exist (pkg/util/iptables, IsNotFoundError).
func iptablesNotFound(err error) bool {
	var ce *cmdError
	return errors.As(err, &ce) && (strings.Contains(ce.stderr, "does not exist") || strings.Contains(ce.stderr, "No chain/target/match by that name"))
}

// run runs name args inside netns with stdin and returns its standard output.
func run(ctx context.Context, netns string, stdin []byte, name string, args ...string) ([]byte, error) {
	argv := append([]string{"netns", "exec", netns, name}, args...)
	cmd := exec.CommandContext(ctx, "ip", argv...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) && ctx.Err() == nil {
			code = ee.ExitCode()
		}
		return stdout.Bytes(), &cmdError{args: append([]string{"ip"}, argv...), code: code, stderr: stderr.String(), err: err}
	}
	return stdout.Bytes(), nil
}

// iptablesWait is iptables' -w: wait this many seconds for the xtables lock.
const iptablesWait = "5"

func applyIptables(ctx context.Context, netns string, rules Rules) error {
	// Validate before touching anything.
	if _, err := rules.IptablesRestore(nil); err != nil {
		return err
	}
	for _, j := range iptablesJumps {
		// EnsureChain: -N, exit status 1 means it exists already.
		if _, err := run(ctx, netns, nil, "iptables", "-w", iptablesWait, "-t", j.table, "-N", j.target); err != nil && exitCode(err) != 1 {
			return err
		}
		// EnsureRule(Prepend): -C, exit status 1 means absent, then -I.
		check := append([]string{"-w", iptablesWait, "-t", j.table, "-C", j.from}, j.args()...)
		if _, err := run(ctx, netns, nil, "iptables", check...); err != nil {
			if exitCode(err) != 1 {
				return err
			}
			insert := append([]string{"-w", iptablesWait, "-t", j.table, "-I", j.from}, j.args()...)
			if _, err := run(ctx, netns, nil, "iptables", insert...); err != nil {
				return err
			}
		}
	}
	save, err := run(ctx, netns, nil, "iptables-save", "-t", "nat")
	if err != nil {
		return err
	}
	data, err := rules.IptablesRestore(iptablesSavedChains(save))
	if err != nil {
		return err
	}
	_, err = run(ctx, netns, data, "iptables-restore", "-w", iptablesWait, "--noflush", "--counters")
	return err
}

func flushIptables(ctx context.Context, netns string) error {
	for _, j := range iptablesJumps {
		del := append([]string{"-w", iptablesWait, "-t", j.table, "-D", j.from}, j.args()...)
		// The rule or the chain it jumps to is not there: that is what we want
		// (utiliptables.IsNotFoundError).
		if _, err := run(ctx, netns, nil, "iptables", del...); err != nil && exitCode(err) != 1 && !iptablesNotFound(err) {
			return err
		}
	}
	for _, table := range []string{"nat", "filter"} {
		save, err := run(ctx, netns, nil, "iptables-save", "-t", table)
		if err != nil {
			return err
		}
		if _, err := run(ctx, netns, iptablesCleanup(table, iptablesSavedChains(save)), "iptables-restore", "-w", iptablesWait, "--noflush", "--counters"); err != nil {
			return err
		}
	}
	return nil
}

func applyNftables(ctx context.Context, netns string, rules Rules) error {
	if _, err := rules.NftablesScript(nil, true); err != nil {
		return err
	}
	counts, exists, err := nftablesChains(ctx, netns)
	if err != nil {
		return err
	}
	if exists {
		del, deleted, err := rules.nftablesDeleteStale(counts)
		if err != nil {
			return err
		}
		if del != nil {
			// As kube-proxy: a failed deletion is retried by a later sync.
			if _, err := run(ctx, netns, del, "nft", "-f", "-"); err == nil {
				for _, c := range deleted {
					delete(counts, c)
				}
			}
		}
	}
	var existing []string
	for c := range counts {
		existing = append(existing, c)
	}
	script, err := rules.NftablesScript(existing, !exists)
	if err != nil {
		return err
	}
	_, err = run(ctx, netns, script, "nft", "-f", "-")
	return err
}

// nftablesChains lists the chains of table ip kube-proxy with their rule counts, read
// from `nft -j list table`; exists is false if there is no such table.
func nftablesChains(ctx context.Context, netns string) (counts map[string]int, exists bool, err error) {
	out, err := run(ctx, netns, nil, "nft", "-j", "list", "table", "ip", nftablesTable)
	if err != nil {
		if notFound(err) {
			return map[string]int{}, false, nil
		}
		return nil, false, err
	}
	counts, err = parseNftChains(out)
	return counts, err == nil, err
}

// parseNftChains reads the chains and their rule counts from `nft -j list table` output.
func parseNftChains(out []byte) (map[string]int, error) {
	var doc struct {
		Nftables []struct {
			Chain *struct {
				Name string `json:"name"`
			} `json:"chain"`
			Rule *struct {
				Chain string `json:"chain"`
			} `json:"rule"`
		} `json:"nftables"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("proxyrules: reading nft -j output: %w", err)
	}
	counts := map[string]int{}
	for _, o := range doc.Nftables {
		switch {
		case o.Chain != nil:
			counts[o.Chain.Name] += 0
		case o.Rule != nil:
			counts[o.Rule.Chain]++
		}
	}
	return counts, nil
}
