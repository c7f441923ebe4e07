package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestFlagsConsistent walks every command: a flag name has one type and
// one shorthand everywhere, and a shorthand always stands for the same
// long name.
func TestFlagsConsistent(t *testing.T) {
	type seen struct {
		typ, shorthand, where string
	}
	byName := map[string]seen{}
	byShort := map[string]seen{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || f.Name == "help" {
				return
			}
			where := c.CommandPath()
			if prev, ok := byName[f.Name]; ok && (prev.typ != f.Value.Type() || prev.shorthand != f.Shorthand) {
				t.Errorf("--%s is %s -%s in %q but %s -%s in %q", f.Name, f.Value.Type(), f.Shorthand, where, prev.typ, prev.shorthand, prev.where)
			}
			byName[f.Name] = seen{f.Value.Type(), f.Shorthand, where}
			if f.Shorthand == "" {
				return
			}
			if prev, ok := byShort[f.Shorthand]; ok && prev.typ != f.Name {
				t.Errorf("-%s is --%s in %q but --%s in %q", f.Shorthand, f.Name, where, prev.typ, prev.where)
			}
			byShort[f.Shorthand] = seen{typ: f.Name, where: where}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(streams{}))
	for _, name := range []string{"host", "json", "num-ctx", "cache-dir", "num-predict"} {
		if _, ok := byName[name]; !ok {
			t.Errorf("no command has --%s", name)
		}
	}
}

// TestOldFlagNames: the old long names still set the value.
func TestOldFlagNames(t *testing.T) {
	tests := []struct {
		name string
		cmd  func(streams) *cobra.Command
		args []string
	}{
		{"bench --tokens", newBenchCmd, []string{"--tokens", "7"}},
		{"bench -n", newBenchCmd, []string{"-n", "7"}},
		{"debug generate --n", newDebugGenerateCmd, []string{"--n", "7"}},
		{"debug generate --num-predict", newDebugGenerateCmd, []string{"--num-predict", "7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var errOut bytes.Buffer
			c := tt.cmd(streams{Err: &errOut})
			c.SetErr(&errOut)
			if err := c.ParseFlags(tt.args); err != nil {
				t.Fatal(err)
			}
			got, err := c.Flags().GetInt("num-predict")
			if err != nil || got != 7 {
				t.Errorf("num-predict = %d, %v; want 7", got, err)
			}
		})
	}
}

func TestArgsErrors(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"bench"}, []string{"`helexa bench` takes one argument, got none", "usage is `helexa bench MODEL [flags]`", "helexa bench --help"}},
		{[]string{"pull"}, []string{"`helexa pull` takes at least one argument, got none", "helexa pull MODEL..."}},
		{[]string{"ps", "extra", "words"}, []string{"`helexa ps` takes no arguments, got \"extra words\""}},
		{[]string{"debug", "info", "a.gguf", "b.gguf"}, []string{"`helexa debug info` takes one argument, got \"a.gguf b.gguf\"", "helexa debug info MODEL.gguf"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			root := newRootCmd(streams{Out: &out, Err: &out})
			root.SetArgs(tt.args)
			err := root.Execute()
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestPullHelpListsAliases: the README sends users to `pull --help` for
// the aliases.
func TestPullHelpListsAliases(t *testing.T) {
	var out bytes.Buffer
	root := newRootCmd(streams{Out: &out, Err: &out})
	root.SetArgs([]string{"pull", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"qwen3:0.6b", "Qwen/Qwen3-0.6B-GGUF:Q8_0", "$HELEXA_CONFIG"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("pull --help lacks %q:\n%s", want, out.String())
		}
	}
}
