//go:build unix

package chat

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFromDirHostileFiles: a template file that is a device, a FIFO or
// over its cap fails at once without being read, and a template past the
// parse depth fails with a *LimitError naming the file it came from.
func TestFromDirHostileFiles(t *testing.T) {
	deep := strings.Repeat("(", 100_000) + "1" + strings.Repeat(")", 100_000)
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
		limit bool
	}{
		{"jinja dev-zero", func(t *testing.T, dir string) { link(t, "/dev/zero", dir, "chat_template.jinja") }, "not a regular file", false},
		{"config dev-zero", func(t *testing.T, dir string) { link(t, "/dev/zero", dir, "tokenizer_config.json") }, "not a regular file", false},
		{"jinja fifo", func(t *testing.T, dir string) {
			if err := syscall.Mkfifo(filepath.Join(dir, "chat_template.jinja"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file", false},
		{"json too large", func(t *testing.T, dir string) {
			write(t, dir, "chat_template.json", strings.Repeat(" ", 5<<20))
		}, "too large", false},
		{"jinja too deep", func(t *testing.T, dir string) {
			write(t, dir, "chat_template.jinja", "{{ "+deep+" }}")
		}, "chat_template.jinja: ", true},
		{"config too deep", func(t *testing.T, dir string) {
			quoted, _ := json.Marshal("{{ " + deep + " }}")
			write(t, dir, "tokenizer_config.json", `{"chat_template": `+string(quoted)+`}`)
		}, "tokenizer_config.json: ", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.setup(t, dir)
			done := make(chan error, 1)
			go func() { _, err := FromDir(dir); done <- err }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("FromDir blocked")
			}
			var le *LimitError
			if err == nil || !strings.Contains(err.Error(), c.want) || errors.As(err, &le) != c.limit {
				t.Fatalf("got %v; want an error containing %q (limit error: %v)", err, c.want, c.limit)
			}
			if c.limit && le.Limit != LimitParseDepth {
				t.Fatalf("limit %q, want %q", le.Limit, LimitParseDepth)
			}
		})
	}
}

func write(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func link(t *testing.T, target, dir, name string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}
