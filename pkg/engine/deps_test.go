package engine

import (
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/helexa/helexa/"

// links returns every package pattern links (go list -deps, tests aside).
func links(t *testing.T, pattern string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pattern).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pattern, err, out)
	}
	return strings.Fields(string(out))
}

// checkLinks fails for every dependency of pattern under a forbidden
// prefix.
func checkLinks(t *testing.T, pattern string, forbidden []string) {
	t.Helper()
	for _, dep := range links(t, pattern) {
		for _, f := range forbidden {
			if strings.HasPrefix(dep, f) {
				t.Errorf("%s links %s", pattern, dep)
			}
		}
	}
}

// tree forbids a package and everything under it.
func tree(pkg string) []string { return []string{mod + pkg, mod + pkg + "/"} }

// under joins the forbidden prefixes of several rules.
func under(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// TestClientsLinkNoEngine: the engine's contract (this package) and its
// clients (the API client, the TUI) link no compute kernels, no model
// formats, no template engine and no hub client — those live behind the
// executor and in the loaders, in the daemon or a runner process.
func TestClientsLinkNoEngine(t *testing.T) {
	forbidden := []string{
		mod + "pkg/compute",
		mod + "pkg/executor/local",
		mod + "pkg/models/",
		mod + "pkg/hub",
		mod + "internal/jinja",
	}
	for _, pkg := range []string{mod + "pkg/engine", mod + "pkg/api", mod + "pkg/tui"} {
		checkLinks(t, pkg, forbidden)
	}
}

// TestLayers: no package imports one above it. The front ends (api, tui)
// sit on the engine's contract and never on its internals (the loaders,
// executor implementations, compute); the loaders sit below the front
// ends; models and compute import nothing of the engine, the executors or
// the front ends (pkg/executor's seam types aside, for compute).
func TestLayers(t *testing.T) {
	frontEnds := under(tree("pkg/api"), tree("pkg/tui"))
	// The executor implementations (local, rpc, tp, replay); pkg/executor
	// itself is the seam's types, which the engine's contract carries.
	executors := []string{mod + "pkg/executor/"}
	rules := []struct {
		pattern   string
		forbidden []string
	}{
		{mod + "pkg/engine/loader/...", frontEnds},
		{mod + "pkg/api/...", under(tree("pkg/engine/loader"), executors, tree("pkg/compute"))},
		{mod + "pkg/tui/...", under(tree("pkg/engine/loader"), executors, tree("pkg/compute"))},
		{mod + "pkg/models/...", under(tree("pkg/engine"), tree("pkg/executor"), tree("pkg/hub"), frontEnds)},
		{mod + "pkg/compute/...", under(tree("pkg/engine"), executors, tree("pkg/hub"), frontEnds)},
	}
	for _, r := range rules {
		t.Run(r.pattern, func(t *testing.T) { checkLinks(t, r.pattern, r.forbidden) })
	}
}
