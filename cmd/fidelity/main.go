// Command fidelity runs emulate/fidelity's scenarios in both engines and prints how
// far simulate is from emulate: `make fidelity`. It needs root, as emulate does.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"syscall"
	"time"

	"trafficlab/emulate"
	"trafficlab/emulate/fidelity"
)

func main() {
	seeds := flag.Int("seeds", 3, "seeds per scenario: 1, 2, ... N, the same in both engines")
	duration := flag.Duration("duration", 10*time.Second, "length of every run")
	run := flag.String("run", "", "only the scenarios whose name matches this regular expression")
	markdown := flag.Bool("markdown", false, "print the table in Markdown, for the README")
	exe := flag.String("exe", "", "the trafficlab binary the pods run (default: bin/trafficlab)")
	flag.Parse()
	match, err := regexp.Compile(*run)
	if err != nil {
		fail(err)
	}
	var cases []fidelity.Case
	for _, c := range fidelity.Cases {
		if match.MatchString(c.Name) {
			cases = append(cases, c)
		}
	}
	var list []int64
	for s := 1; s <= *seeds; s++ {
		list = append(list, int64(s))
	}
	if *exe == "" {
		*exe = "bin/trafficlab"
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	rows, err := fidelity.Run(ctx, cases, list, *duration, emulate.Options{Exe: *exe}, os.Stderr)
	if len(rows) > 0 {
		fmt.Printf("%d scenarios × %d seeds × %v in each engine, in %v\n\n", len(rows), len(list), *duration, time.Since(start).Round(time.Second))
		if terr := fidelity.Table(os.Stdout, rows, *markdown); terr != nil {
			fail(terr)
		}
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "fidelity:", err)
	os.Exit(1)
}
