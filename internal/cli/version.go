package cli

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X trafficlab/internal/cli.version=v0.1.0".
var version = "dev"

func newVersion(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print trafficlab's version",
		Args:  cobra.NoArgs,
		Run: func(*cobra.Command, []string) {
			goVersion := "unknown"
			if info, ok := debug.ReadBuildInfo(); ok {
				goVersion = info.GoVersion
			}
			fmt.Fprintf(stdout, "trafficlab %s (%s)\n", version, goVersion)
		},
	}
}
