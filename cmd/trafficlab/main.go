// Command trafficlab reproduces, predicts and explains how traffic behaves inside a
// Kubernetes cluster. It only wires the CLI; see internal/cli.
package main

import (
	"os"

	"trafficlab/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
