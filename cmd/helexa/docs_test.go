package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helexa/helexa/internal/envvars"
)

// docsSection is one "## " section of docs/commands.md: the commands its
// heading names and the flags its text mentions.
type docsSection struct {
	heading  string
	commands []string // paths below helexa: "pull", "debug logits"; "" is helexa itself
	flags    map[string]bool
}

var (
	headingCmdRe = regexp.MustCompile("`helexa( [a-z][a-z-]*)?")
	codeSpanRe   = regexp.MustCompile("`[^`]*`")
	docFlagRe    = regexp.MustCompile(`(?:^|[^A-Za-z0-9_-])--([a-z][a-z0-9-]*)`)
)

// commandsDocSections splits docs/commands.md into the sections whose
// heading names a command.
func commandsDocSections(t *testing.T, crossRefs map[string][]string) []docsSection {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "commands.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []docsSection
	var cur *docsSection
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "## ") {
			out = append(out, docsSection{heading: line, flags: map[string]bool{}})
			cur = &out[len(out)-1]
			for _, m := range headingCmdRe.FindAllStringSubmatch(line, -1) {
				cur.commands = append(cur.commands, strings.TrimSpace(m[1]))
			}
		}
		if cur == nil {
			continue
		}
		for _, m := range docFlagRe.FindAllStringSubmatch(stripCrossRefs(line, cur, crossRefs), -1) {
			cur.flags[m[1]] = true
		}
	}
	return slices.DeleteFunc(out, func(s docsSection) bool { return len(s.commands) == 0 })
}

// stripCrossRefs removes from line the code spans that show another
// command (`helexa serve --stop`, `serve --detach`), recording their
// flags in crossRefs under that command, so they are checked against it
// rather than against the section's.
func stripCrossRefs(line string, sec *docsSection, crossRefs map[string][]string) string {
	return codeSpanRe.ReplaceAllStringFunc(line, func(span string) string {
		words := strings.Fields(strings.Trim(span, "`"))
		if len(words) > 0 && words[0] == "helexa" {
			words = words[1:]
		}
		if len(words) == 0 || !slices.Contains(topCommands, words[0]) || slices.Contains(sec.commands, words[0]) {
			return span
		}
		for _, m := range docFlagRe.FindAllStringSubmatch(span, -1) {
			crossRefs[words[0]] = append(crossRefs[words[0]], m[1])
		}
		return ""
	})
}

// topCommands are the names of helexa's visible commands.
var topCommands = func() []string {
	var names []string
	for _, c := range newRootCmd(streams{}).Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return names
}()

// visibleFlags are a command's flags as --help shows them (local and
// inherited, not hidden, not --help), with those of every subcommand
// (helexa's own, for `helexa --version`, without its subcommands').
func visibleFlags(c *cobra.Command, into map[string]bool) {
	add := func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" {
			into[f.Name] = true
		}
	}
	c.LocalFlags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
	if !c.HasParent() {
		return
	}
	for _, sub := range c.Commands() {
		if !sub.Hidden {
			visibleFlags(sub, into)
		}
	}
}

// docsInherit names the sections that document only what a command adds
// to another's flags ("every run flag works the same").
var docsInherit = map[string]string{"tp": "run"}

// TestCommandsDocMatchesFlags: every flag docs/commands.md mentions in a
// command's section is a real flag of that command, and every flag the
// command's --help lists is mentioned there. Each visible command has a
// section.
func TestCommandsDocMatchesFlags(t *testing.T) {
	root := newRootCmd(streams{})
	root.InitDefaultVersionFlag()
	find := func(path string) *cobra.Command {
		if path == "" {
			return root
		}
		c, _, err := root.Find(strings.Fields(path))
		if err != nil || c == root {
			t.Fatalf("docs/commands.md names `helexa %s`, which is not a command", path)
		}
		return c
	}
	documented := map[string]bool{}
	crossRefs := map[string][]string{}
	for _, sec := range commandsDocSections(t, crossRefs) {
		real := map[string]bool{}
		for _, path := range sec.commands {
			documented[path] = true
			visibleFlags(find(path), real)
		}
		for f := range sec.flags {
			if !real[f] && f != "help" {
				t.Errorf("docs/commands.md %q mentions --%s, which %v lacks", sec.heading, f, sec.commands)
			}
		}
		inherited := map[string]bool{}
		for _, path := range sec.commands {
			if from, ok := docsInherit[path]; ok {
				visibleFlags(find(from), inherited)
			}
		}
		for _, f := range sortedKeys(real) {
			if !sec.flags[f] && !inherited[f] {
				t.Errorf("docs/commands.md %q does not mention --%s of %v", sec.heading, f, sec.commands)
			}
		}
	}
	for path, flags := range crossRefs {
		real := map[string]bool{}
		visibleFlags(find(path), real)
		for _, f := range flags {
			if !real[f] && f != "help" {
				t.Errorf("docs/commands.md shows `helexa %s --%s`, a flag %s lacks", path, f, path)
			}
		}
	}
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() && c.Name() != "help" && c.Name() != "completion" && !documented[c.Name()] {
			t.Errorf("docs/commands.md has no section for `helexa %s`", c.Name())
		}
	}
}

// TestConfigurationDocMatchesEnv: docs/configuration.md names every
// variable a user may set (envvars.User), and every HELEXA_* or HF_*
// variable it names is one helexa declares.
func TestConfigurationDocMatchesEnv(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`\b(?:HELEXA|HF)_[A-Z0-9_]*[A-Z0-9]\b`).FindAllString(string(b), -1) {
		named[m] = true
	}
	declared := map[string]bool{}
	for _, v := range envvars.All() {
		declared[v.Name] = true
	}
	for _, v := range envvars.User() {
		if !named[v.Name] {
			t.Errorf("docs/configuration.md does not describe %s", v.Name)
		}
	}
	for _, n := range sortedKeys(named) {
		if !declared[n] {
			t.Errorf("docs/configuration.md names %s, which internal/envvars does not declare", n)
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
