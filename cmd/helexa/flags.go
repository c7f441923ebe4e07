package main

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helexa/helexa/internal/envvars"
)

// The flags several commands share are bound here, so one thing has one
// name, shorthand and help text everywhere.

// addHostFlag binds --host for the commands that talk to a daemon.
func addHostFlag(cmd *cobra.Command, dst *string) {
	cmd.Flags().StringVar(dst, "host", "", fmt.Sprintf("daemon address host:port (default $%s, else the address the detached daemon recorded, else %s)", envvars.Host.Name, envvars.Host.Default))
}

// addVerboseDaemonFlag binds --verbose for the commands that only talk
// to a daemon: it names the daemon asked and why that one.
func addVerboseDaemonFlag(cmd *cobra.Command, dst *bool) {
	cmd.Flags().BoolVar(dst, "verbose", false, "say on stderr which daemon is asked and why that one (--host, $"+envvars.Host.Name+" or the detached daemon's pid file)")
}

// verboseTo is w when verbose is on, else nil (quiet).
func verboseTo(verbose bool, w io.Writer) io.Writer {
	if verbose {
		return w
	}
	return nil
}

// addCacheDirFlag binds --cache-dir for the commands that use the
// Hugging Face cache.
func addCacheDirFlag(cmd *cobra.Command, dst *string) {
	cmd.Flags().StringVar(dst, "cache-dir", "", "Hugging Face cache root (default: the config file's hub_cache, $"+envvars.HFHubCache.Name+
		", $"+envvars.HFHome.Name+"/hub, $XDG_CACHE_HOME/huggingface/hub or ~/.cache/huggingface/hub)")
}

// addDeviceFlag binds --device for the commands that run models.
func addDeviceFlag(cmd *cobra.Command, dst *string) {
	cmd.Flags().StringVar(dst, "device", "", fmt.Sprintf("where models run: auto, cpu, cuda or cuda:N (default $%s or %s)",
		envvars.Device.Name, envvars.Device.Default))
}

// addNumCtxFlag binds --num-ctx for the commands that load a model.
func addNumCtxFlag(cmd *cobra.Command, dst *int) {
	cmd.Flags().IntVar(dst, "num-ctx", 0, fmt.Sprintf("context size in tokens (default $%s or %s, capped at the model's training context)",
		envvars.NumCtx.Name, envvars.NumCtx.Default))
}

// addNumPredictFlag binds -n/--num-predict, the number of tokens to
// generate. oldName, when set, is an earlier long name kept as a hidden
// alias (hidden rather than deprecated: cobra prints deprecation notices
// on stdout, which would spoil --json output).
func addNumPredictFlag(cmd *cobra.Command, dst *int, def int, usage, oldName string) {
	f := cmd.Flags()
	f.IntVarP(dst, "num-predict", "n", def, usage)
	if oldName != "" {
		f.IntVar(dst, oldName, def, usage+" (old name of -n/--num-predict)")
		_ = f.MarkHidden(oldName)
	}
}

// exactArgs is cobra.ExactArgs with an error that shows how to call the
// command.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == n {
			return nil
		}
		return argsError(cmd, args, "takes "+countArgs(n))
	}
}

// minArgs is cobra.MinimumNArgs with an error that shows how to call the
// command.
func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) >= n {
			return nil
		}
		return argsError(cmd, args, "takes at least "+countArgs(n))
	}
}

// noArgs is cobra.NoArgs with an error that shows how to call the command.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return argsError(cmd, args, "takes no arguments")
}

func countArgs(n int) string {
	if n == 1 {
		return "one argument"
	}
	return fmt.Sprintf("%d arguments", n)
}

func argsError(cmd *cobra.Command, args []string, want string) error {
	got := "none"
	if len(args) > 0 {
		got = fmt.Sprintf("%q", strings.Join(args, " "))
	}
	return fmt.Errorf("`%s` %s, got %s: usage is `%s` (see `%s --help`)", cmd.CommandPath(), want, got, cmd.UseLine(), cmd.CommandPath())
}

// flagRange is one flag's value and the range it must lie in.
type flagRange struct {
	Flag  string // as typed: "--top-p", "-r/--repetitions"
	Value string
	OK    bool
	Want  string // the range, in words
}

// firstOutOfRange is an error naming the first flag out of its range (nil
// when all are in range), so the user reads about the flag they got wrong
// and not the rules of every other one.
func firstOutOfRange(checks []flagRange) error {
	for _, c := range checks {
		if !c.OK {
			return fmt.Errorf("%s %s is out of range: want %s", c.Flag, c.Value, c.Want)
		}
	}
	return nil
}

// finite reports a number that is neither NaN nor infinite.
func finite(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }

// fmtNum formats a float flag value the way it was probably typed.
func fmtNum(v float32) string { return strconv.FormatFloat(float64(v), 'g', -1, 32) }

// flagError rewords cobra's flag errors: a mistyped flag gets a
// suggestion, and a value that does not parse says what the flag wants
// instead of strconv's words.
func flagError(cmd *cobra.Command, err error) error {
	if m := badValueRe.FindStringSubmatch(err.Error()); m != nil {
		return badFlagValue(cmd, m[1], m[2], m[3], err)
	}
	return suggestFlag(cmd, err)
}

// badValueRe matches pflag's `invalid argument "abc" for "-n, --num-predict" flag: …`.
var badValueRe = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-(\w), )?--([\w-]+)" flag: `)

func badFlagValue(cmd *cobra.Command, value, short, name string, err error) error {
	shown := "--" + name
	if short != "" {
		shown = "-" + short + "/--" + name
	}
	want := map[string]string{
		"int": "a whole number", "int64": "a whole number", "uint": "a whole number >= 0",
		"float32": "a number", "float64": "a number", "bool": "true or false",
		"duration": "a duration such as 30s, 5m or 1h",
	}
	typ := ""
	if f := cmd.Flags().Lookup(name); f != nil {
		typ = f.Value.Type()
	}
	w, ok := want[typ]
	if !ok {
		return err
	}
	return &userError{fmt.Sprintf("%s %q is not %s", shown, value, w), err}
}

// suggestFlag adds "did you mean --X?" to an unknown-flag error when a
// flag of the command is a likely intended spelling.
func suggestFlag(cmd *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	if best := closestFlag(cmd, name); best != "" {
		return fmt.Errorf("%w (did you mean --%s?)", err, best)
	}
	return err
}

// closestFlag is the visible flag of cmd nearest to name: within two
// edits (cobra's distance for command suggestions), or one name starts
// with the other; "" when none is.
func closestFlag(cmd *cobra.Command, name string) string {
	best, bestD := "", 3
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := editDistance(strings.ToLower(name), f.Name)
		if d > 2 && len(name) >= 3 && (strings.HasPrefix(f.Name, name) || strings.HasPrefix(name, f.Name)) {
			d = 2
		}
		if d < bestD {
			best, bestD = f.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance between a and b, counting a
// swap of two neighbouring letters as one edit.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
