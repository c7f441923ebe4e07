package tui

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/helexa/helexa/internal/fsutil"
)

// MaxHistory caps the entries kept in memory and written to the file.
const MaxHistory = 1000

// History is the ↑/↓ input history, persisted as one JSON string per line
// (so multi-line inputs survive). A History with an empty path lives in
// memory only.
type History struct {
	path    string
	entries []string
}

// LoadHistory reads the history file at path; a missing file is an empty
// history. Lines that are not JSON strings are skipped.
func LoadHistory(path string) (*History, error) {
	h := &History{path: path}
	if path == "" {
		return h, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return h, fmt.Errorf("reading input history: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		var s string
		if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
			h.entries = append(h.entries, s)
		}
	}
	if err := sc.Err(); err != nil {
		return h, fmt.Errorf("reading input history %s: %w", path, err)
	}
	if len(h.entries) > MaxHistory {
		h.entries = h.entries[len(h.entries)-MaxHistory:]
	}
	return h, nil
}

// Len is the number of entries.
func (h *History) Len() int { return len(h.entries) }

// At returns entry i (0 = oldest).
func (h *History) At(i int) string { return h.entries[i] }

// Add appends an entry (skipping blanks and a repeat of the last entry)
// and appends it to the file. The file is rewritten when it has grown
// well past MaxHistory.
func (h *History) Add(s string) error {
	if strings.TrimSpace(s) == "" || (len(h.entries) > 0 && h.entries[len(h.entries)-1] == s) {
		return nil
	}
	h.entries = append(h.entries, s)
	if len(h.entries) > 2*MaxHistory {
		h.entries = h.entries[len(h.entries)-MaxHistory:]
		return h.rewrite()
	}
	if h.path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return fmt.Errorf("saving input history: %w", err)
	}
	f, err := os.OpenFile(h.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("saving input history: %w", err)
	}
	line, _ := json.Marshal(s)
	_, werr := f.Write(append(line, '\n'))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("saving input history %s: %w", h.path, werr)
	}
	return nil
}

func (h *History) rewrite() error {
	if h.path == "" {
		return nil
	}
	var b strings.Builder
	for _, e := range h.entries {
		line, _ := json.Marshal(e)
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := fsutil.WriteFileAtomic(h.path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("saving input history: %w", err)
	}
	return nil
}

// cursor walks the history with ↑/↓, keeping the text being typed.
type histCursor struct {
	pos   int // == Len() when on the draft
	draft string
}

// prev moves to the older entry; ok is false at the oldest.
func (c *histCursor) prev(h *History, current string) (string, bool) {
	if c.pos > h.Len() {
		c.pos = h.Len()
	}
	if c.pos == 0 {
		return "", false
	}
	if c.pos == h.Len() {
		c.draft = current
	}
	c.pos--
	return h.At(c.pos), true
}

// next moves to the newer entry (or back to the draft).
func (c *histCursor) next(h *History) (string, bool) {
	if c.pos >= h.Len() {
		return "", false
	}
	c.pos++
	if c.pos == h.Len() {
		return c.draft, true
	}
	return h.At(c.pos), true
}

func (c *histCursor) reset(h *History) { c.pos, c.draft = h.Len(), "" }
