package compute

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/helexa/helexa/"

// TestComputeImportsNothingAbove: the compute packages (the seam and
// every backend, with and without the real CUDA driver) sit below the
// executors, the engine, the sampler, the API and the model code that
// drive them; the seam itself holds no implementation; and the backends do
// not lean on each other.
func TestComputeImportsNothingAbove(t *testing.T) {
	above := []string{"pkg/engine", "pkg/executor", "pkg/sampling", "pkg/api", "pkg/tui", "pkg/hub", "pkg/models", "cmd/"}
	for _, tags := range []string{"", "cuda"} {
		for _, tc := range []struct {
			pkg       string
			forbidden []string
		}{
			{"pkg/compute/...", above},
			{"pkg/compute", []string{"pkg/compute/cpu", "pkg/compute/cuda"}},
			{"pkg/compute/cpu/...", []string{"pkg/compute/cuda"}},
			{"pkg/compute/cuda/...", []string{"pkg/compute/cpu"}},
		} {
			for _, dep := range listDeps(t, tags, module+tc.pkg) {
				for _, f := range tc.forbidden {
					if dep == module+f || strings.HasPrefix(dep, module+strings.TrimSuffix(f, "/")+"/") {
						t.Errorf("%s (tags %q) imports %s", tc.pkg, tags, dep)
					}
				}
			}
		}
	}
}

// listDeps is `go list -deps` of pattern built with tags: every package
// it imports, directly or not (tests' imports aside).
func listDeps(t *testing.T, tags, pattern string) []string {
	t.Helper()
	args := []string{"list", "-deps"}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	out, err := exec.Command("go", append(args, pattern)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(append(args, pattern), " "), err, out)
	}
	return strings.Fields(string(out))
}
