// Package cli holds trafficlab's commands, one file per verb.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes: 0 success, 1 a failure while running, 2 bad input, 130 a
// run stopped by SIGINT or SIGTERM, its partial result written (128 + SIGINT, as a
// shell reports a process Ctrl-C ended).
const (
	exitOK          = 0
	exitFailure     = 1
	exitBadInput    = 2
	exitInterrupted = 130
)

// badInput marks errors caused by the user's input; they exit 2.
type badInput struct{ error }

// seeHelp is bad input that the command's --help explains: it prints with a pointer
// to it on a line of its own, as git's usage errors do.
type seeHelp struct {
	err error
	cmd *cobra.Command
}

// badUsage is err as bad input that ends with the pointer to c's --help.
func badUsage(c *cobra.Command, err error) error { return badInput{seeHelp{err, c}} }

func (e seeHelp) Error() string {
	return fmt.Sprintf("%v\nSee '%s --help'.", e.err, e.cmd.CommandPath())
}

func (e seeHelp) Unwrap() error { return e.err }

// Main runs the CLI and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	return run(context.Background(), args, stdout, stderr)
}

// interrupted ends a run that SIGINT or SIGTERM stopped once what it had was
// written; it exits 130. It says what the output covers.
type interrupted struct{ covered string }

func (i interrupted) Error() string {
	return "interrupted: the result covers " + i.covered
}

// interruptible is the context a long run watches: done at SIGINT or SIGTERM, when
// the run stops and writes what it has. Until the run returns, the signals do
// nothing else, so that a second Ctrl-C does not cut the writing short.
func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// run is Main with a context that commands which run until stopped (serve) watch;
// long runs stop early when it is done, as at SIGINT.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, err)
	return exitCode(err)
}

// exitCode is the exit status of a command that returned err.
func exitCode(err error) int {
	var bad badInput
	var stopped interrupted
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &bad):
		return exitBadInput
	case errors.As(err, &stopped):
		return exitInterrupted
	}
	return exitFailure
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "trafficlab",
		Short: "Reproduce, predict and explain traffic inside a Kubernetes cluster",
		Long: `trafficlab answers questions like "why do 2 of my 5 pods get all the traffic?"
in seconds, from one scenario file, without a cluster.

A scenario describes nodes, Services with their pods, and the clients that call them
(threads or a rate, and how their HTTP library pools connections). simulate runs it as
a deterministic discrete-event simulation and reports which pods got how many
requests, with what latency, and why.`,
		Example: `  # Run the built-in example: one shared .NET HttpClient, 5 threads, 5 pods
  trafficlab simulate

  # Run a scenario file, then ask "what if there were 8 replicas?"
  trafficlab simulate examples/r1-shared-client-5-threads.yaml
  trafficlab simulate examples/r1-shared-client-5-threads.yaml --set spec.services[0].replicas=8

  # Machine-readable output, and a check of a scenario without running it
  trafficlab simulate examples/r1-curl-loop.yaml -o json > result.json
  trafficlab validate my-scenario.yaml`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return badUsage(c, err)
	})
	root.AddCommand(newSimulate(stdout, stderr), newEmulate(stdout, stderr), newCluster(stdout, stderr), newSweep(stdout, stderr), newValidate(stderr), newReport(stdout), newCompare(stdout),
		newVersion(stdout), newExamples(stdout), newLibraries(stdout), newServe(stdout, stderr), newLoad(stdout, stderr))
	root.AddCommand(newImport(stdout, stderr), newSchema(stdout), newImage(stdout), newPause(), newClusterDNS(), newContainerLog(stdout), newBackground(stdout))
	// A wrong number of arguments is bad input too.
	for _, c := range root.Commands() {
		if check := c.Args; check != nil {
			c.Args = func(c *cobra.Command, args []string) error {
				if err := check(c, args); err != nil {
					return badUsage(c, err)
				}
				return nil
			}
		}
	}
	return root
}
