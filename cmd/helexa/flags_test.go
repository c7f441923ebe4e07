package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helexa/helexa/pkg/engine"
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

// TestSamplingRanges: an out-of-range value is refused with the flag's
// name and range.
func TestSamplingRanges(t *testing.T) {
	tests := []struct {
		name string
		mut  func(*runOptions)
		want string // "" = accepted
	}{
		{"defaults", func(*runOptions) {}, ""},
		{"greedy", func(o *runOptions) { o.Temperature = 0 }, ""},
		{"negative temperature", func(o *runOptions) { o.Temperature = -1 }, "--temperature -1 is out of range: want a number >= 0 (0 = greedy)"},
		{"top-p above 1", func(o *runOptions) { o.TopP = 2 }, "--top-p 2 is out of range: want a number from 0 to 1"},
		{"negative top-k", func(o *runOptions) { o.TopK = -1 }, "--top-k -1 is out of range: want an integer >= 0"},
		{"min-p above 1", func(o *runOptions) { o.MinP = 1.5 }, "--min-p 1.5 is out of range"},
		{"negative repeat penalty", func(o *runOptions) { o.RepeatPenalty = -0.5 }, "--repeat-penalty -0.5 is out of range"},
		{"seed below -1", func(o *runOptions) { o.Seed = -2 }, "--seed -2 is out of range: want -1 (random) or an integer >= 0"},
		{"negative num-predict", func(o *runOptions) { o.NumPredict = -3 }, "-n/--num-predict -3 is out of range"},
		{"negative num-ctx", func(o *runOptions) { o.NumCtx = -1 }, "--num-ctx -1 is out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := runOptions{Temperature: 0.8, TopP: 0.95, TopK: 40, MinP: 0.05, RepeatPenalty: 1, Seed: -1}
			tt.mut(&o)
			_, err := o.request()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}

// TestFlagErrors runs the command line: a mistyped flag gets a
// suggestion, a bad value names its flag alone.
func TestFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
		not  string
	}{
		{"transposed letters", []string{"run", "m", "--tempreature", "0.5"}, "unknown flag: --tempreature (did you mean --temperature?)", ""},
		{"a prefix", []string{"bench", "m", "--repet", "2"}, "(did you mean --repetitions?)", ""},
		{"a dropped letter", []string{"ps", "--jsn"}, "(did you mean --json?)", ""},
		{"nothing close", []string{"ps", "--frobnicate"}, "unknown flag: --frobnicate", "did you mean"},
		{"negative temperature", []string{"run", "m", "--temperature", "-1", "hi"}, "--temperature -1 is out of range", ""},
		{"bench -r 0", []string{"bench", "m", "-r", "0", "-p", "8"}, "-r/--repetitions 0 is out of range: want at least 1", "-t/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := newRootCmd(streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
			root.SetArgs(tt.args)
			err := root.Execute()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
			if tt.not != "" && strings.Contains(err.Error(), tt.not) {
				t.Errorf("err %v holds %q", err, tt.not)
			}
		})
	}
}

// TestEditDistance counts a swap of neighbours as one edit.
func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "abc", 0}, {"abc", "", 3}, {"tempreature", "temperature", 1},
		{"jsn", "json", 1}, {"host", "hots", 1}, {"kitten", "sitting", 3},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestPsHelpStates: ps --help names the states a model can be in, and
// only those.
func TestPsHelpStates(t *testing.T) {
	var out bytes.Buffer
	root := newRootCmd(streams{Out: &out, Err: &out})
	root.SetArgs([]string{"ps", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{engine.StateLoading, engine.StateReady, engine.StatePoisoned} {
		if !strings.Contains(out.String(), st) {
			t.Errorf("ps --help lacks the state %q:\n%s", st, out.String())
		}
	}
	if strings.Contains(out.String(), "busy") {
		t.Errorf("ps --help names a state busy that does not exist:\n%s", out.String())
	}
}
