package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallScript runs install.sh from the checkout into a temporary
// PREFIX: it builds helexa there and prints the next two commands.
func TestInstallScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the helexa binary")
	}
	prefix := t.TempDir()
	cmd := exec.Command("sh", "install.sh")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "PREFIX="+prefix)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}
	for _, want := range []string{"helexa run", "helexa serve"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("install.sh output lacks %q:\n%s", want, out)
		}
	}
	v, err := exec.Command(filepath.Join(prefix, "bin", "helexa"), "version").CombinedOutput()
	if err != nil || !strings.Contains(string(v), "cpu kernels:") {
		t.Fatalf("the installed helexa: %v\n%s", err, v)
	}
}
