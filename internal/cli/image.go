package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"trafficlab/containerimage"
)

func newImage(stdout io.Writer) *cobra.Command {
	var out, push, binary string
	var pause bool
	c := &cobra.Command{
		Use:   "image",
		Short: "Pack trafficlab's own binary as a container image, for the pods of a real cluster",
		Long: `image writes a one-layer container image holding this trafficlab binary at /trafficlab,
with no base image: what the cluster engine's pods run (trafficlab serve, trafficlab
load). Its labels name the version and the binary's SHA-256, so that a run can refuse
an image of another build. The binary must be static (make build makes it so).

It writes a tarball, which a node loads with
  ctr -n k8s.io images import trafficlab-image.tar     (containerd)
  kind load image-archive trafficlab-image.tar         (kind)
and pods run it with imagePullPolicy: Never; or it pushes to a registry the local
docker config can log in to.`,
		Example: `  trafficlab image                              # trafficlab-image.tar
  trafficlab image -o /tmp/tl.tar
  trafficlab image --push registry.example.com/team/trafficlab:v0.1.0`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if binary == "" {
				exe, err := os.Executable()
				if err != nil {
					return err
				}
				binary = exe
			}
			var args []string
			refOf := containerimage.Ref
			if pause {
				args, refOf = []string{"pause"}, containerimage.PauseRef
			}
			img, err := containerimage.Build(binary, buildVersion(), args...)
			if err != nil {
				return badUsage(c, err)
			}
			if push != "" {
				if c.Flags().Changed("output") {
					return badUsage(c, errors.New("-o writes a tarball and --push sends to a registry: give one"))
				}
				if err := containerimage.Push(push, img); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "pushed %s\n", push)
				return nil
			}
			ref, err := refOf(buildVersion())
			if err != nil {
				return err
			}
			if err := containerimage.WriteTarball(out, ref, img); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote %s (%s)\n", out, ref)
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVarP(&out, "output", "o", "trafficlab-image.tar", "the tarball to write")
	fl.StringVar(&push, "push", "", "push to this image reference instead, e.g. registry.example.com/trafficlab:v0.1.0")
	fl.StringVar(&binary, "binary", "", "the binary to pack (default: this one)")
	fl.BoolVar(&pause, "pause", false, "the pod sandbox image instead (trafficlab.local/pause), running trafficlab pause,\nfor a cluster that cannot pull registry.k8s.io/pause")
	return c
}

// buildVersion is the version set at build time, or for a development build the
// commit it was built from, as Go records it: "dev-0c0751c1a2b3", "-dirty" when
// the tree had changes.
func buildVersion() string {
	if version != "dev" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return version
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return version
	}
	v := "dev-" + rev[:min(12, len(rev))]
	if dirty {
		v += "-dirty"
	}
	return v
}
