package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/envvars"
)

// helpOf runs helexa with args and returns stdout.
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	root := newRootCmd(streams{Out: &out, Err: &out})
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		t.Fatalf("helexa %v: %v", args, err)
	}
	return out.String()
}

// TestRootHelpCommandsFirst: `helexa --help` shows the commands, not a
// wall of environment variables, and points to `helexa help environment`,
// which lists every variable a user may set and none of the tests-only ones.
func TestRootHelpCommandsFirst(t *testing.T) {
	help := helpOf(t, "--help")
	cmds := strings.Index(help, "Available Commands:")
	if cmds < 0 || strings.Count(help[:cmds], "\n") > 8 {
		t.Errorf("helexa --help: the commands should come within the first lines:\n%s", help)
	}
	for _, v := range envvars.All() {
		if strings.Contains(help, v.Name) {
			t.Errorf("helexa --help lists %s; the variables belong to `helexa help environment`", v.Name)
		}
	}
	if !strings.Contains(help, "helexa help environment") {
		t.Errorf("helexa --help does not point to `helexa help environment`:\n%s", help)
	}
	env := helpOf(t, "help", "environment")
	for _, v := range envvars.User() {
		if !strings.Contains(env, v.Name) {
			t.Errorf("helexa help environment lacks %s", v.Name)
		}
	}
	for _, v := range envvars.TestsOnly() {
		if strings.Contains(env, v.Name) {
			t.Errorf("helexa help environment lists the tests-only %s", v.Name)
		}
	}
}

// TestTPHelpAgrees: tp --help states the --size range it enforces, shows
// one device flag and no claim that GPU ranks just need another build.
func TestTPHelpAgrees(t *testing.T) {
	help := helpOf(t, "tp", "--help")
	for _, want := range []string{"--size is 2 to 16", "number of tensor-parallel ranks (2 to 16)", "--device", "the CUDA runner refuses a split"} {
		if !strings.Contains(help, want) {
			t.Errorf("tp --help lacks %q:\n%s", want, help)
		}
	}
	if strings.Contains(help, "--devices") {
		t.Errorf("tp --help shows --devices beside --device:\n%s", help)
	}
	for _, tt := range []struct {
		size string
		ok   bool
	}{{"1", false}, {"2", true}, {"16", true}, {"17", false}} {
		o := tpOptions{}
		o.Run.TP = map[string]int{"1": 1, "2": 2, "16": 16, "17": 17}[tt.size]
		if err := checkTPFlags(&o); (err == nil) != tt.ok {
			t.Errorf("--size %s: err %v, want ok=%v", tt.size, err, tt.ok)
		}
	}
}
