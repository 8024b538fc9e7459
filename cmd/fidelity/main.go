// Command fidelity runs fidelity's scenarios in simulate and emulate and, with
// -cluster, in the cluster engine, and prints how far the others are from
// simulate: `make fidelity`. It needs root, as emulate and the local cluster do.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"

	"trafficlab/cluster"
	"trafficlab/containerimage"
	"trafficlab/emulate"
	"trafficlab/fidelity"
)

func main() {
	seeds := flag.Int("seeds", 3, "seeds per scenario: 1, 2, ... N, the same in both engines")
	duration := flag.Duration("duration", 10*time.Second, "length of a run, for the cases that set none of their own")
	run := flag.String("run", "", "only the scenarios whose name matches this regular expression")
	markdown := flag.Bool("markdown", false, "print the table in Markdown, for the README")
	exe := flag.String("exe", "", "the trafficlab binary the pods run (default: bin/trafficlab)")
	onCluster := flag.Bool("cluster", false, "run the cases a cluster can run in the cluster engine too, after emulate: on the local cluster, which hack/localcluster.sh brings up and takes down, or on -kubeconfig's")
	kubeconfig := flag.String("kubeconfig", "", "with -cluster, a running cluster's kubeconfig, instead of the local cluster")
	image := flag.String("image", "", "with -kubeconfig, the trafficlab image its pods run (default: the local cluster's)")
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
	if err == nil && *onCluster {
		err = runOnCluster(ctx, rows, list, *duration, *kubeconfig, *image)
	}
	if len(rows) > 0 {
		fmt.Printf("%d scenarios × %d seeds in each engine, %v a run%s, in %v\n\n", len(rows), len(list), *duration, own(rows), time.Since(start).Round(time.Second))
		if terr := fidelity.Table(os.Stdout, rows, *markdown); terr != nil {
			fail(terr)
		}
		if *onCluster {
			fmt.Println()
			fidelity.NotOnCluster(os.Stdout, rows)
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

// localState is where hack/localcluster.sh keeps the local cluster: the name of
// the image its nodes hold is in the file image.
const localState = "/var/lib/trafficlab-localcluster"

// runOnCluster runs rows' cases on the cluster of kubeconfig, or on the local
// cluster, which it brings up first and takes down after, also when ctx ends.
func runOnCluster(ctx context.Context, rows []fidelity.Row, seeds []int64, duration time.Duration, kubeconfig, image string) error {
	if kubeconfig == "" {
		up := exec.CommandContext(ctx, "hack/localcluster.sh", "up")
		up.Stderr = os.Stderr
		out, err := up.Output()
		defer func() {
			down := exec.Command("hack/localcluster.sh", "down")
			down.Stdout, down.Stderr = os.Stderr, os.Stderr
			if err := down.Run(); err != nil {
				fmt.Fprintln(os.Stderr, "fidelity: hack/localcluster.sh down:", err)
			}
		}()
		if err != nil {
			return fmt.Errorf("hack/localcluster.sh up: %w", err)
		}
		kubeconfig = strings.TrimSpace(string(out))
	}
	if image == "" {
		ref, err := os.ReadFile(localState + "/image")
		if err != nil {
			return fmt.Errorf("the local cluster's image: %w (give -image)", err)
		}
		image = strings.TrimSpace(string(ref))
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	// The engine refuses pods of another version than it is told: the image's
	// tag, trafficlab.local/trafficlab:VERSION, as trafficlab image names it.
	opt := cluster.Options{Config: cfg, Image: image, PullPolicy: corev1.PullNever, Version: containerimage.RefVersion(image),
		ReadyTimeout: time.Minute, Log: os.Stderr}
	if !strings.HasPrefix(image, "trafficlab.local/") {
		opt.PullPolicy = corev1.PullIfNotPresent
	}
	return fidelity.RunCluster(ctx, rows, seeds, duration, opt, os.Stderr)
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
