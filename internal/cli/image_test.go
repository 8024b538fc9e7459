package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestImage(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "tiny")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	os.WriteFile(filepath.Join(src, "go.mod"), []byte("module tiny\n\ngo 1.26\n"), 0o644)
	build := exec.Command("go", "build", "-o", "tiny", ".")
	build.Dir, build.Env = src, append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tarball := filepath.Join(dir, "image.tar")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--binary", filepath.Join(src, "tiny"), "-o", tarball}, exitOK, "wrote " + tarball + " (trafficlab.local/trafficlab:"},
		{[]string{"--binary", "/bin/ls", "-o", tarball}, exitBadInput, "CGO_ENABLED=0"},
		{[]string{"--binary", filepath.Join(src, "tiny"), "-o", tarball, "--push", "registry.invalid/x:1"}, exitBadInput, "give one"},
	} {
		code, stdout, stderr := runCLI(append([]string{"image"}, c.args...)...)
		if code != c.code || !strings.Contains(stdout+stderr, c.want) {
			t.Errorf("image %v: exit %d, %q %q; want %d and %q", c.args, code, stdout, stderr, c.code, c.want)
		}
	}
	if fi, err := os.Stat(tarball); err != nil || fi.Size() == 0 {
		t.Errorf("no tarball written: %v", err)
	}
}
