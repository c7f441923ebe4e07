package hub

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/helexa/helexa/internal/fsutil"
)

// Ref is a parsed model reference.
type Ref struct {
	Raw      string // what the user typed
	Repo     string // org/name; empty for a local path
	Revision string // branch, tag or commit; "main" when not given
	Quant    string // as typed (matched case-insensitively); "" = default; also DIR:QUANT for a local directory of GGUF files
	Path     string // local file or directory, when the reference is local
	Alias    string // the alias the reference came from, if any
}

// Local reports whether the reference names a file or directory on disk.
func (r Ref) Local() bool { return r.Path != "" }

// String renders the canonical form org/repo[:QUANT][@REV] (revision only
// when not main), or the local path.
func (r Ref) String() string {
	if r.Local() {
		if r.Quant != "" {
			return r.Path + ":" + r.Quant
		}
		return r.Path
	}
	s := r.Repo
	if r.Quant != "" {
		s += ":" + r.Quant
	}
	if r.Revision != "" && r.Revision != DefaultRevision {
		s += "@" + r.Revision
	}
	return s
}

// DefaultRevision is the branch used when a reference names none.
const DefaultRevision = "main"

var (
	repoIDRe  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$`)
	commitRe  = regexp.MustCompile(`^[0-9a-f]{40}$`)
	quantRe   = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	hubPrefix = []string{"https://huggingface.co/", "http://huggingface.co/", "https://hf.co/", "huggingface.co/", "hf.co/"}
)

// BuiltinAliases are short names for popular models; the user config file
// ("aliases") adds to and overrides them.
func BuiltinAliases() map[string]string {
	return map[string]string{
		"qwen3:0.6b":     "Qwen/Qwen3-0.6B-GGUF:Q8_0",
		"qwen3:1.7b":     "Qwen/Qwen3-1.7B-GGUF:Q8_0",
		"qwen3:4b":       "Qwen/Qwen3-4B-GGUF:Q4_K_M",
		"qwen3:8b":       "Qwen/Qwen3-8B-GGUF:Q4_K_M",
		"qwen3:14b":      "Qwen/Qwen3-14B-GGUF:Q4_K_M",
		"qwen3:30b-a3b":  "Qwen/Qwen3-30B-A3B-GGUF:Q4_K_M",
		"qwen2.5:0.5b":   "Qwen/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M",
		"qwen2.5:1.5b":   "Qwen/Qwen2.5-1.5B-Instruct-GGUF:Q4_K_M",
		"qwen2.5:3b":     "Qwen/Qwen2.5-3B-Instruct-GGUF:Q4_K_M",
		"qwen2.5:7b":     "Qwen/Qwen2.5-7B-Instruct-GGUF:Q4_K_M",
		"llama3.2:1b":    "bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M",
		"llama3.2:3b":    "bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M",
		"llama3.1:8b":    "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M",
		"mistral:7b":     "bartowski/Mistral-7B-Instruct-v0.3-GGUF:Q4_K_M",
		"tinyllama:1.1b": "TheBloke/TinyLlama-1.1B-Chat-v1.0-GGUF:Q4_K_M",
	}
}

// Config is the part of helexa's config file the hub reads; other keys are
// ignored.
type Config struct {
	// HubCache overrides the cache root (before HF_HUB_CACHE).
	HubCache string `json:"hub_cache"`
	// Aliases maps short names to references.
	Aliases map[string]string `json:"aliases"`
}

// LoadConfig reads the JSON config file at path. A missing file is not an
// error unless required is set (the path was given explicitly).
func LoadConfig(path string, required bool) (Config, error) {
	var c Config
	if path == "" {
		return c, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && !required {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("read config file: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 { // an empty (just created) file
		return c, nil
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("config file %s is not valid JSON: %w", path, err)
	}
	return c, nil
}

// ParseRef parses a reference. aliases maps lower-case short names to
// references (nil = built-in only is NOT implied; pass the merged table).
func ParseRef(raw string, aliases map[string]string) (Ref, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return Ref{}, fmt.Errorf("%w: empty reference; use org/repo[:QUANT][@REVISION], an alias or a path", ErrBadReference)
	}
	_, isAlias := aliases[strings.ToLower(s)]
	if dir, quant, ok := splitLocalQuant(s); ok && (looksLocal(dir) || !isAlias) {
		r, err := localRef(raw, dir)
		r.Quant = quant
		return r, err
	}
	if looksLocal(s) {
		return localRef(raw, s)
	}
	if target, ok := aliases[strings.ToLower(s)]; ok {
		r, err := parseHubRef(target)
		if err != nil {
			return Ref{}, fmt.Errorf("alias %q → %q: %w", s, target, err)
		}
		r.Raw, r.Alias = raw, s
		return r, nil
	}
	r, err := parseHubRef(s)
	if err != nil {
		if fi, statErr := os.Stat(s); statErr == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
			return localRef(raw, s)
		}
		if strings.Contains(s, "/") { // a repo id, not a mistyped alias
			return Ref{}, err
		}
		return Ref{}, withAliasHint(fmt.Errorf("%w %q: not an alias, a local file or a Hugging Face repo id (org/name, e.g. Qwen/Qwen3-0.6B-GGUF)", ErrUnknownModel, s), aliases)
	}
	r.Raw = raw
	return r, nil
}

func withAliasHint(err error, aliases map[string]string) error {
	names := make([]string, 0, len(aliases))
	for k := range aliases {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return err
	}
	return fmt.Errorf("%w (known aliases: %s)", err, strings.Join(names, ", "))
}

// splitLocalQuant splits DIR:QUANT, a local directory of GGUF files and
// the quant to pick among them, as for a Hub repository (FILE.gguf:QUANT
// too, so that resolving it can say the quant has nothing to pick from). It declines when
// s itself exists (a colon in a file name) and when DIR is also a valid
// repo id and not written as a path, which stays a Hub reference.
func splitLocalQuant(s string) (dir, quant string, ok bool) {
	i := strings.LastIndex(s, ":")
	if i <= 0 || strings.Contains(s[i:], "@") {
		return "", "", false
	}
	dir, quant = s[:i], s[i+1:]
	if !quantRe.MatchString(quant) {
		return "", "", false
	}
	if _, err := os.Stat(s); err == nil {
		return "", "", false
	}
	if !looksLocal(dir) && repoIDRe.MatchString(dir) {
		return "", "", false
	}
	expanded, err := fsutil.ExpandHome(dir)
	if err != nil {
		return "", "", false
	}
	if fi, err := os.Stat(expanded); err != nil || !fi.IsDir() && !strings.HasSuffix(strings.ToLower(dir), ".gguf") {
		return "", "", false
	}
	return dir, quant, true
}

func looksLocal(s string) bool {
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") ||
		strings.HasPrefix(s, "~/") || s == "." || s == ".." || filepath.IsAbs(s) {
		return true
	}
	if strings.HasSuffix(strings.ToLower(s), ".gguf") && !strings.ContainsAny(s, ":@") {
		return true
	}
	return false
}

func localRef(raw, s string) (Ref, error) {
	s, err := fsutil.ExpandHome(s)
	if err != nil {
		return Ref{}, err
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		return Ref{}, fmt.Errorf("%w: %s: %w", ErrBadReference, s, err)
	}
	return Ref{Raw: raw, Path: abs}, nil
}

func parseHubRef(s string) (Ref, error) {
	for _, p := range hubPrefix {
		if len(s) > len(p) && strings.EqualFold(s[:len(p)], p) {
			s = s[len(p):]
			break
		}
	}
	r := Ref{Revision: DefaultRevision}
	end := strings.IndexAny(s, ":@")
	if end < 0 {
		end = len(s)
	}
	r.Repo = s[:end]
	rest := s[end:]
	for rest != "" {
		kind := rest[0]
		rest = rest[1:]
		next := strings.IndexAny(rest, ":@")
		if next < 0 {
			next = len(rest)
		}
		val := rest[:next]
		rest = rest[next:]
		if val == "" {
			return Ref{}, fmt.Errorf("%w %q: empty %s", ErrBadReference, s, map[byte]string{':': "quant", '@': "revision"}[kind])
		}
		if kind == ':' {
			if !quantRe.MatchString(val) {
				return Ref{}, fmt.Errorf("%w %q: quant %q may only hold letters, digits, '.', '_' and '-'", ErrBadReference, s, val)
			}
			r.Quant = val
		} else {
			if err := checkRevision(val); err != nil {
				return Ref{}, fmt.Errorf("%w %q: %w", ErrBadReference, s, err)
			}
			r.Revision = val
		}
	}
	if err := checkRepoID(r.Repo); err != nil {
		return Ref{}, fmt.Errorf("%w %q: %w", ErrBadReference, s, err)
	}
	return r, nil
}

func checkRepoID(id string) error {
	if !repoIDRe.MatchString(id) || strings.Contains(id, "..") || strings.Contains(id, "--") {
		return fmt.Errorf("%q is not a Hugging Face repo id (want org/name, e.g. Qwen/Qwen3-0.6B-GGUF)", id)
	}
	return nil
}

func checkRevision(rev string) error {
	if strings.Contains(rev, "..") || strings.ContainsAny(rev, "\\ \t\n") || strings.HasPrefix(rev, "/") || strings.HasSuffix(rev, "/") {
		return fmt.Errorf("revision %q is not a valid branch, tag or commit", rev)
	}
	return nil
}

// IsCommit reports whether rev is a full 40-hex commit id.
func IsCommit(rev string) bool { return commitRe.MatchString(rev) }
