// Command fidelity runs fidelity's scenarios in both engines and prints how
// far simulate is from emulate: `make fidelity`. It needs root, as emulate does.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"trafficlab/emulate"
	"trafficlab/fidelity"
)

func main() {
	seeds := flag.Int("seeds", 3, "seeds per scenario: 1, 2, ... N, the same in both engines")
	duration := flag.Duration("duration", 10*time.Second, "length of a run, for the cases that set none of their own")
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
		fmt.Printf("%d scenarios × %d seeds in each engine, %v a run%s, in %v\n\n", len(rows), len(list), *duration, own(rows), time.Since(start).Round(time.Second))
		if terr := fidelity.Table(os.Stdout, rows, *markdown); terr != nil {
			fail(terr)
		}
		fmt.Println()
		if terr := fidelity.CheckTable(os.Stdout, rows, *markdown); terr != nil {
			fail(terr)
		}
	}
	if err != nil {
		fail(err)
	}
}

// own names the cases whose runs have a length of their own.
func own(rows []fidelity.Row) string {
	var out []string
	for _, r := range rows {
		if r.Case.Duration > 0 {
			out = append(out, fmt.Sprintf("%s %v", r.Case.Name, r.Case.Duration))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return " (" + strings.Join(out, ", ") + ")"
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "fidelity:", err)
	os.Exit(1)
}
