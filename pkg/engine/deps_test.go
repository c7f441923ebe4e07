package engine

import (
	"os/exec"
	"strings"
	"testing"
)

// TestClientsLinkNoEngine: the engine's contract (this package) and its
// clients (the API client, the TUI) link no compute kernels, no model
// formats, no template engine and no hub client — those live behind the
// executor and in the loaders, in the daemon or a runner process.
func TestClientsLinkNoEngine(t *testing.T) {
	forbidden := []string{
		"github.com/helexa/helexa/pkg/compute",
		"github.com/helexa/helexa/pkg/executor/local",
		"github.com/helexa/helexa/pkg/models/",
		"github.com/helexa/helexa/pkg/hub",
		"github.com/nikolalohinski/gonja",
	}
	for _, pkg := range []string{"github.com/helexa/helexa/pkg/engine", "github.com/helexa/helexa/pkg/api", "github.com/helexa/helexa/pkg/tui"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				if strings.HasPrefix(dep, f) {
					t.Errorf("%s links %s", pkg, dep)
				}
			}
		}
	}
}
