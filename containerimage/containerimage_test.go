package containerimage

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// staticBinary builds a tiny static program for the test.
func staticBinary(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module tiny\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", "tiny", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return filepath.Join(dir, "tiny")
}

// The image holds the binary, and only it, at /trafficlab, runs it, names its
// version and digest, and reads back from its tarball; the same binary makes the
// same image.
func TestBuildWritesAnImageOfTheBinary(t *testing.T) {
	bin := staticBinary(t)
	img, err := Build(bin, "v9.9.9")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Ref("v9.9.9")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "image.tar")
	if err := WriteTarball(out, ref, img); err != nil {
		t.Fatal(err)
	}
	back, err := tarball.ImageFromPath(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := back.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(bin)
	sum := sha256.Sum256(want)
	version, digest, _ := Labels(back)
	if strings.Join(cf.Config.Entrypoint, " ") != Path || cf.OS != "linux" || version != "v9.9.9" || digest != hex.EncodeToString(sum[:]) {
		t.Errorf("config %+v, labels %q %q", cf.Config, version, digest)
	}
	layers, err := back.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers, %v; want one", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	h, err := tr.Next()
	if err != nil || h.Name != "trafficlab" || h.Mode != 0o755 {
		t.Fatalf("layer entry %+v, %v; want trafficlab, 0755", h, err)
	}
	got, _ := io.ReadAll(tr)
	if !bytes.Equal(got, want) {
		t.Error("the layer's binary differs from the file")
	}
	if _, err := tr.Next(); err != io.EOF {
		t.Errorf("a second entry in the layer: %v", err)
	}
	again, _ := Build(bin, "v9.9.9")
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("the same binary made images %s and %s", d1, d2)
	}
}

// A dynamically linked binary would find no C library in the image: refused.
func TestBuildRefusesADynamicBinary(t *testing.T) {
	const dynamic = "/bin/ls" // Debian's coreutils link libc
	if _, err := os.Stat(dynamic); err != nil {
		t.Skip(dynamic, "missing")
	}
	if _, err := Build(dynamic, "v1"); err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("Build(%s): %v, want a refusal naming CGO_ENABLED=0", dynamic, err)
	}
}

// The pause image runs the binary as `trafficlab pause`, under its own name.
func TestPauseImage(t *testing.T) {
	img, err := Build(staticBinary(t), "v1", "pause")
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := PauseRef("v1")
	if got := strings.Join(cf.Config.Entrypoint, " "); got != Path+" pause" || ref.String() != "trafficlab.local/pause:v1" {
		t.Errorf("entrypoint %q, reference %s", got, ref)
	}
}

// A reference Ref makes names its version in its tag, registry port or not.
func TestRefVersion(t *testing.T) {
	for _, version := range []string{"v0.1.0", "dev-5b772aa1c2d3-dirty"} {
		ref, err := Ref(version)
		if err != nil {
			t.Fatal(err)
		}
		if got := RefVersion(ref.String()); got != version {
			t.Errorf("RefVersion(%s) = %q, want %q", ref, got, version)
		}
	}
	if got := RefVersion("registry.local:5000/trafficlab:v2"); got != "v2" {
		t.Errorf("with a registry port: %q", got)
	}
}
