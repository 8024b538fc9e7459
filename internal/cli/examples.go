package cli

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"trafficlab/examples"
	"trafficlab/model/kubeproxy"
	"trafficlab/model/library"
	"trafficlab/scenario"
)

func newExamples(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "examples [NAME]",
		Short: "List the built-in example scenarios, or print one",
		Long: `examples lists the scenarios built into trafficlab, each reproducing a published
investigation (see examples/README.md). With NAME it prints that scenario, ready to
save and edit.`,
		Example: `  trafficlab examples
  trafficlab examples r1-curl-loop.yaml > my.yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				data, err := examples.Get(args[0])
				if err != nil {
					return badInput{err}
				}
				_, err = stdout.Write(forSaving(data))
				return err
			}
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			for _, ex := range examples.List() {
				def := ""
				if ex.Name == examples.DefaultName {
					def = " (default)"
				}
				fmt.Fprintf(tw, "%s%s\t%s\n", ex.Name, def, firstSentence(ex.Description))
			}
			return tw.Flush()
		},
	}
}

// schemaLine is the examples' first line: it points editors at the schema in the
// repository, a path that holds only inside examples/.
const schemaLine = "# yaml-language-server: $schema=../docs/scenario.schema.json\n"

// schemaHowTo replaces schemaLine in an example printed to be saved elsewhere: how
// to get the schema and point the file at it (yaml-language-server reads a first
// comment "yaml-language-server: $schema=PATH", relative to the file).
const schemaHowTo = "# For an editor's completion and checks: trafficlab schema > scenario.schema.json, then begin\n" +
	"# this file with the comment `# yaml-language-server: $schema=scenario.schema.json` (the\n" +
	"# schema's path from this file).\n"

// forSaving is example data as printed, to be saved anywhere: its schema line
// replaced by how to get the schema, the rest as it is.
func forSaving(data []byte) []byte {
	if rest, ok := bytes.CutPrefix(data, []byte(schemaLine)); ok {
		return append([]byte(schemaHowTo), rest...)
	}
	return data
}

// firstSentence cuts a description after its first sentence: a period, question
// or exclamation mark before a capital letter or the end. A cut at a line's end
// would stop mid-sentence ("…over a link with").
func firstSentence(s string) string {
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune(".?!", rune(s[i])) {
			continue
		}
		rest := s[i+1:]
		if rest == "" {
			return s
		}
		if len(rest) > 1 && rest[0] == ' ' && unicode.IsUpper(rune(rest[1])) {
			return s[:i+1]
		}
	}
	return s
}

func newLibraries(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "libraries",
		Short: "List the client library profiles a client can name with `library:`",
		Long: `A client's library sets its connection-pool defaults the way the real library does
(fields under connections: still win). This lists each profile, its defaults and the
source they come from.

PICK is which idle connection a request reuses: the one returned last (lifo), the one
idle longest (fifo), or the first one opened (created). IDLE CHECK is whether the
library looks for the server's close on an idle connection before reusing it: always,
only after it has been idle that long, or never (the request then goes out on the
closed connection). STALE CONN is what a request sees when the reused connection under
it was closed by the server (a pod that drained or exited) before any answer:
"resends" means the library sends it again on another connection without an error
(Go, .NET); "fails" means the caller gets the error. ON ERROR "aborts" means the tool ends its whole run at the first
refused, reset or timed-out request, as ab does without -r. TIMEOUT is the library's own
request timeout, a client's timeout: when the scenario gives none; "none" means the
library waits for ever, and the scenario's default of 30s applies.

CPU/REQ and CPU/CONN are the CPU the client's own process spends per request on a kept
connection and per new connection, and STEADY what it burns all along whatever it sends,
in cores (a client's work: when the scenario gives none),
measured on one core of this project's test machine (go run ./cmd/cpucost); "-" where
none could be measured, and the client's CPU is then not modelled. The line after the
table gives what kube-proxy's own process spends relaying in userspace mode
(spec.cluster.proxyWork).

The second table is how each library finds the pods of a headless Service
(clusterIP: None), whose name cluster DNS answers with the ready pods in a new random
order each time: how long it keeps an answer, which address a new connection takes,
and, for a gRPC channel, when it looks the name up again. "not modelled": a headless
target is refused for it.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "LIBRARY\tREUSE\tMAX/HOST\tMAX IDLE\tIDLE TIMEOUT\tLIFETIME\tPICK\tIDLE CHECK\tTIMEOUT\tSTALE CONN\tON ERROR\tCPU/REQ\tCPU/CONN\tSTEADY\tSUMMARY")
			for _, name := range library.Names() {
				p, _ := library.Lookup(name)
				stale, onError := "fails", "counts"
				if p.RetriesStaleIdempotent {
					stale = "resends"
				}
				if p.AbortsRun {
					onError = "aborts"
				}
				timeout := "none"
				if p.Timeout > 0 {
					timeout = p.Timeout.String()
				}
				steady := "-"
				if p.SteadyMilliCPU > 0 {
					steady = fmt.Sprintf("%dm", p.SteadyMilliCPU)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.Reuse, limit(p.MaxPerHost), limit(p.MaxIdlePerHost),
					never(p.IdleTimeout.String(), p.IdleTimeout == 0), never(p.MaxLifetime.String(), p.MaxLifetime == 0),
					cmp.Or(p.IdlePick, "-"), idleCheck(p), timeout, stale, onError, cpuCost(p.RequestCPU), cpuCost(p.ConnectionCPU), steady, p.Summary)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			conn, req, kib := kubeproxy.Userspace.RelayCPU()
			fmt.Fprintf(stdout, "\nkube-proxy userspace relay: %s per connection, %s per request, %s per KiB copied\n", conn, req, kib)
			fmt.Fprintln(stdout, "\nHeadless Services: how each library resolves the name")
			tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "LIBRARY\tDNS")
			for _, name := range library.Names() {
				fmt.Fprintf(tw, "%s\t%s\n", name, library.ResolutionOf(name))
			}
			return tw.Flush()
		},
	}
}

// idleCheck says when a library looks for the server's close on an idle
// connection before reusing it; "-" when it does not reuse connections.
func idleCheck(p library.Profile) string {
	switch {
	case p.Reuse == scenario.ReuseNone:
		return "-"
	case p.UncheckedIdle == library.NeverChecked:
		return "never"
	case p.UncheckedIdle > 0:
		return "after " + p.UncheckedIdle.String()
	}
	return "always"
}

func limit(n int) string {
	if n == 0 {
		return "unlimited"
	}
	return fmt.Sprint(n)
}

func never(s string, isNever bool) string {
	if isNever {
		return "never"
	}
	return s
}

func cpuCost(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return d.String()
}
