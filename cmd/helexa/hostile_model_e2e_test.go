//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/models/safetensors/sttest"
)

// hostileTimeout bounds every run on a hostile model directory: each must
// fail (or finish) well within it, never hang or grow without bound.
const hostileTimeout = 30 * time.Second

// stModel converts the stories260K fixture into a safetensors directory
// (a fresh temporary directory) and applies edit to it.
func stModel(t *testing.T, edit func(dir string)) string {
	t.Helper()
	dir := t.TempDir()
	if err := sttest.Convert(fixtures.Path(t, "models", "stories260K.gguf"), dir, sttest.Options{}); err != nil {
		t.Fatal(err)
	}
	edit(dir)
	return dir
}

// editConfig sets one key of dir's config.json.
func editConfig(t *testing.T, dir, key string, value any) {
	t.Helper()
	p := filepath.Join(dir, "config.json")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg[key] = value
	if raw, err = json.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// replaceWith makes dir/name a link to target (or, for "fifo", a FIFO).
func replaceWith(t *testing.T, dir, name, target string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	var err error
	if target == "fifo" {
		err = syscall.Mkfifo(p, 0o644)
	} else {
		err = os.Symlink(target, p)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// byteLevelTokenizer writes a byte-level BPE tokenizer.json whose
// pre-tokenizer is the single Split regex pattern (ids 3.. within the
// fixture's 512-row embedding).
func byteLevelTokenizer(t *testing.T, dir, pattern string) {
	t.Helper()
	vocab := map[string]int{}
	n := 0
	for b := range 256 { // GPT-2's bytes_to_unicode
		r := rune(b)
		if !(b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE) {
			r = rune(256 + n)
			n++
		}
		vocab[string(r)] = 3 + b
	}
	doc := map[string]any{
		"added_tokens": []any{map[string]any{"id": 1, "content": "<s>", "special": true}, map[string]any{"id": 2, "content": "</s>", "special": true}},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": pattern}, "behavior": "Isolated"},
			map[string]any{"type": "ByteLevel", "use_regex": false},
		}},
		"decoder": map[string]any{"type": "ByteLevel"},
		"model":   map[string]any{"type": "BPE", "vocab": vocab, "merges": []string{}},
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runHostile runs `helexa run dir --raw -n 4 prompt` under hostileTimeout
// and returns its stderr and exit error.
// errorLines are stderr's lines but the note run prints when it loads the
// model in this process.
func errorLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if !strings.HasPrefix(l, "no helexa daemon answers at ") {
			out = append(out, l)
		}
	}
	return out
}

func runHostile(t *testing.T, bin, dir, prompt string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hostileTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", dir, "--raw", "--temperature", "0", "-n", "4", prompt)
	cmd.Env = runEnv(t)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("helexa run %s did not end within %v\n%s", dir, hostileTimeout, stderr.String())
	}
	t.Logf("%s: %v after %v: %s", filepath.Base(dir), err, time.Since(start).Round(time.Millisecond), strings.TrimSpace(stderr.String()))
	return stderr.String(), err
}

// TestRunHostileModelDirs: `helexa run` on a safetensors directory with an
// absurd layer count, a config.json that is /dev/zero or a FIFO, or a
// tokenizer.json that is /dev/zero fails at once with one line naming the
// problem; a tokenizer whose pre-tokenizer regex backtracks
// catastrophically fails or finishes in bounded time.
func TestRunHostileModelDirs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	bin := buildRunBinary(t)
	fails := []struct {
		name string
		edit func(t *testing.T, dir string)
		want string
	}{
		{"layers", func(t *testing.T, dir string) { editConfig(t, dir, "num_hidden_layers", 1000000000) }, "num_hidden_layers = 1000000000 exceeds the limit of 4096"},
		{"heads", func(t *testing.T, dir string) { editConfig(t, dir, "num_attention_heads", 1<<30) }, "num_attention_heads"},
		{"config dev-zero", func(t *testing.T, dir string) { replaceWith(t, dir, "config.json", "/dev/zero") }, "not a regular file"},
		{"config fifo", func(t *testing.T, dir string) { replaceWith(t, dir, "config.json", "fifo") }, "not a regular file"},
		{"tokenizer dev-zero", func(t *testing.T, dir string) { replaceWith(t, dir, "tokenizer.json", "/dev/zero") }, "not a regular file"},
		{"tokenizer_config dev-zero", func(t *testing.T, dir string) { replaceWith(t, dir, "tokenizer_config.json", "/dev/zero") }, "not a regular file"},
		{"backtracking regex", func(t *testing.T, dir string) { byteLevelTokenizer(t, dir, `(x+x+)+(?=y)`) }, "timed out"},
	}
	for _, tc := range fails {
		t.Run(tc.name, func(t *testing.T) {
			dir := stModel(t, func(dir string) { tc.edit(t, dir) })
			stderr, err := runHostile(t, bin, dir, strings.Repeat("x", 40))
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("want a failed run, got %v\n%s", err, stderr)
			}
			if lines := errorLines(stderr); len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
				t.Fatalf("stderr %q: want one line containing %q", stderr, tc.want)
			}
		})
	}
	// A pattern RE2 can run takes linear time whatever it looks like.
	dir := stModel(t, func(dir string) { byteLevelTokenizer(t, dir, `(x+x+)+y`) })
	if stderr, err := runHostile(t, bin, dir, strings.Repeat("x", 40)); err != nil {
		t.Fatalf("a linear-time pattern: %v\n%s", err, stderr)
	}
	// A /dev/zero chat template costs nothing: a raw prompt still runs
	// (runHostile bounds the time).
	dir = stModel(t, func(dir string) {
		if err := os.Symlink("/dev/zero", filepath.Join(dir, "chat_template.jinja")); err != nil {
			t.Fatal(err)
		}
	})
	if stderr, err := runHostile(t, bin, dir, "Once upon a time"); err != nil {
		t.Fatalf("a /dev/zero chat template with a raw prompt: %v\n%s", err, stderr)
	}
}
