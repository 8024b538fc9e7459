// Package containerimage packs trafficlab's own binary as a one-layer container
// image, for the cluster engine's pods (`trafficlab serve` and `trafficlab load` in
// a real cluster): no base image, no Docker, only the static binary at /trafficlab,
// its version and digest in the image's labels so that the engine can refuse an
// image of another build. The image is written as a tarball that `ctr images
// import` and `kind load image-archive` read, or pushed to a registry.
package containerimage

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Path is where the binary is in the image, and its entrypoint.
const Path = "/trafficlab"

// Labels naming the build the image holds.
const (
	VersionLabel = "org.opencontainers.image.version"
	DigestLabel  = "io.trafficlab.binary.sha256"
)

// Build makes the image of the binary at path, trafficlab version version, which
// runs it with args. The binary must be static: the image has no C library for a
// dynamic one to load.
func Build(path, version string, args ...string) (v1.Image, error) {
	bin, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := static(bin); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	// A fixed time, so that the same binary makes the same image.
	if err := tw.WriteHeader(&tar.Header{Name: Path[1:], Mode: 0o755, Size: int64(len(bin)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(layer.Bytes())), nil })
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(bin)
	return mutate.ConfigFile(img, &v1.ConfigFile{
		Architecture: runtime.GOARCH, OS: "linux", Created: v1.Time{Time: time.Unix(0, 0)},
		RootFS: v1.RootFS{Type: "layers", DiffIDs: mustDiffIDs(img)},
		Config: v1.Config{Entrypoint: append([]string{Path}, args...), Labels: map[string]string{VersionLabel: version, DigestLabel: hex.EncodeToString(sum[:])}},
	})
}

func mustDiffIDs(img v1.Image) []v1.Hash {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil
	}
	return cf.RootFS.DiffIDs
}

// static reports why an ELF binary is not static: it names an interpreter (the
// dynamic loader).
func static(bin []byte) error {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return fmt.Errorf("not an ELF binary: %w", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("dynamically linked; build it static (CGO_ENABLED=0, as make build does) for an image with no C library")
		}
	}
	return nil
}

// Ref is the image's reference for version: a name no registry serves, so that a
// pod with imagePullPolicy Never runs only the image loaded onto its node.
func Ref(version string) (name.Reference, error) {
	return name.NewTag("trafficlab.local/trafficlab:" + version)
}

// RefVersion is the version a reference that Ref made names: its tag.
func RefVersion(ref string) string { return ref[strings.LastIndex(ref, ":")+1:] }

// PauseRef is the reference of the pause image of version, the binary run as
// `trafficlab pause`: a pod sandbox's process for a cluster that cannot pull one.
func PauseRef(version string) (name.Reference, error) {
	return name.NewTag("trafficlab.local/pause:" + version)
}

// WriteTarball writes img as a tarball tagged ref, for ctr images import and kind
// load image-archive.
func WriteTarball(path string, ref name.Reference, img v1.Image) error {
	return tarball.WriteToFile(path, ref, img)
}

// Push pushes img to ref with the credentials of the local keychain (docker's
// config), as docker push would.
func Push(ref string, img v1.Image) error {
	r, err := name.ParseReference(ref)
	if err != nil {
		return err
	}
	return remote.Write(r, img, remote.WithAuthFromKeychain(authn.DefaultKeychain))
}

// Labels is the version and binary digest an image says it holds.
func Labels(img v1.Image) (version, digest string, err error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return "", "", err
	}
	return cf.Config.Labels[VersionLabel], cf.Config.Labels[DigestLabel], nil
}
