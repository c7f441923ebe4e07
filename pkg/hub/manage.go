package hub

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// CachedModel is one model in the cache: a GGUF quant or a safetensors
// snapshot of a repo at one commit.
type CachedModel struct {
	Ref      string    `json:"ref"`  // org/repo[:QUANT][@REV]
	Repo     string    `json:"repo"` // org/name
	Format   string    `json:"format"`
	Quant    string    `json:"quant,omitempty"`
	Revision string    `json:"revision,omitempty"` // refs pointing at the commit ("main", ...); empty if none
	Commit   string    `json:"commit"`
	Files    []string  `json:"files"`
	Size     int64     `json:"size"`
	Path     string    `json:"path"` // the .gguf (first shard) or the snapshot folder
	Modified time.Time `json:"modified"`
}

// List returns the models in the cache, sorted by reference. Snapshots
// without GGUF or safetensors weights are skipped.
func (c *Client) List(ctx context.Context) ([]CachedModel, error) {
	entries, err := os.ReadDir(c.opts.CacheDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read cache %s: %w", c.opts.CacheDir, err)
	}
	var out []CachedModel
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		repo := repoFromFolder(e.Name())
		if !e.IsDir() || repo == "" {
			continue
		}
		models, err := c.listRepo(repo)
		if err != nil {
			return nil, err
		}
		out = append(out, models...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref < out[j].Ref })
	return out, nil
}

// refsByCommit maps each commit to the refs naming it.
func (c *Client) refsByCommit(repo string) map[string][]string {
	m := map[string][]string{}
	root := filepath.Join(c.repoDir(repo), "refs")
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		commit := strings.TrimSpace(string(data))
		m[commit] = append(m[commit], filepath.ToSlash(rel))
		return nil
	})
	for _, refs := range m {
		sort.Strings(refs)
	}
	return m
}

func (c *Client) listRepo(repo string) ([]CachedModel, error) {
	snaps, err := os.ReadDir(filepath.Join(c.repoDir(repo), "snapshots"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read snapshots of %s: %w", repo, err)
	}
	refs := c.refsByCommit(repo)
	var out []CachedModel
	for _, s := range snaps {
		if !s.IsDir() {
			continue
		}
		out = append(out, c.snapshotModels(repo, s.Name(), refs[s.Name()])...)
	}
	return out, nil
}

// snapshotModels splits one snapshot into its models (one per GGUF quant).
func (c *Client) snapshotModels(repo, commit string, refs []string) []CachedModel {
	dir := filepath.Join(c.repoDir(repo), "snapshots", commit)
	files, err := snapshotFiles(dir)
	if err != nil {
		return nil
	}
	var present []string
	for _, f := range files {
		if cachedFile(filepath.Join(dir, filepath.FromSlash(f))) {
			present = append(present, f)
		}
	}
	rev := strings.Join(refs, ",")
	ref := Ref{Repo: repo, Revision: DefaultRevision}
	if !contains(refs, DefaultRevision) {
		ref.Revision = commit
		if len(refs) > 0 {
			ref.Revision = refs[0]
		}
	}
	var groups []selection
	var ggufs []string
	for _, f := range present {
		if isGGUFWeight(f) {
			ggufs = append(ggufs, f)
		}
	}
	if len(ggufs) > 0 {
		for q, fs := range quantGroups(ggufs) {
			groups = append(groups, selection{Format: FormatGGUF, Quant: q, Files: fs})
		}
	} else if sel, err := selectFiles(repo, present, ""); err == nil {
		groups = append(groups, sel)
	}
	out := make([]CachedModel, 0, len(groups))
	for _, g := range groups {
		r := ref
		r.Quant = g.Quant
		m := CachedModel{Ref: r.String(), Repo: repo, Format: g.Format, Quant: g.Quant, Revision: rev, Commit: commit, Files: g.Files, Path: dir}
		if g.Format == FormatGGUF {
			m.Path = filepath.Join(dir, filepath.FromSlash(g.Files[0]))
		}
		for _, f := range g.Files {
			if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f))); err == nil {
				m.Size += fi.Size()
				if fi.ModTime().After(m.Modified) {
					m.Modified = fi.ModTime()
				}
			}
		}
		out = append(out, m)
	}
	return out
}

// Remove deletes a model from the cache: the reference's quant (or, without
// one, the whole snapshot), then the blobs no remaining snapshot uses, the
// refs pointing at a snapshot that became empty, and the repo folder when
// nothing is left.
func (c *Client) Remove(ctx context.Context, ref string) error {
	r, err := c.ParseRef(ref)
	if err != nil {
		return err
	}
	if r.Local() {
		return fmt.Errorf("%w: %s is a local path, not a model in the cache: rm removes cached models only; delete the file yourself", ErrBadReference, r.Path)
	}
	commit, err := c.cachedCommit(r)
	if err != nil {
		return err
	}
	if commit == "" && r.Revision == DefaultRevision {
		commit = c.onlySnapshot(r.Repo)
	}
	if commit == "" {
		return fmt.Errorf("%w: %s (`helexa list` shows what is)", ErrNotCached, r.String())
	}
	dir := filepath.Join(c.repoDir(r.Repo), "snapshots", commit)
	files, err := snapshotFiles(dir)
	if err != nil {
		return fmt.Errorf("read snapshot: %w", err)
	}
	doomed := files
	if r.Quant != "" {
		sel, err := selectFiles(r.Repo, files, r.Quant)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNotCached, err)
		}
		doomed = sel.Files
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	blobs := map[string]bool{}
	for _, f := range doomed {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if target, err := filepath.EvalSymlinks(p); err == nil && target != p {
			blobs[target] = true
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", p, err)
		}
	}
	removeEmptyDirs(dir)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		c.dropRefs(r.Repo, commit)
	}
	return c.dropUnusedBlobs(r.Repo, blobs)
}

// removeEmptyDirs removes dir and its sub-folders that hold no files.
func removeEmptyDirs(dir string) {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Remove(dirs[i]) // fails (and is ignored) when not empty
	}
}

func (c *Client) dropRefs(repo, commit string) {
	for rc, refs := range c.refsByCommit(repo) {
		if rc != commit {
			continue
		}
		for _, ref := range refs {
			os.Remove(filepath.Join(c.repoDir(repo), "refs", filepath.FromSlash(ref)))
		}
	}
}

// dropUnusedBlobs deletes candidate blobs no snapshot links to any more,
// and the repo folder when no snapshot is left.
func (c *Client) dropUnusedBlobs(repo string, candidates map[string]bool) error {
	used := map[string]bool{}
	snapRoot := filepath.Join(c.repoDir(repo), "snapshots")
	_ = filepath.WalkDir(snapRoot, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if t, err := filepath.EvalSymlinks(p); err == nil {
				used[t] = true
			}
		}
		return nil
	})
	for b := range candidates {
		if !used[b] {
			if err := os.Remove(b); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("remove blob %s: %w", b, err)
			}
		}
	}
	if snaps, _ := os.ReadDir(snapRoot); len(snaps) == 0 && len(used) == 0 {
		if err := os.RemoveAll(c.repoDir(repo)); err != nil {
			return fmt.Errorf("remove %s: %w", c.repoDir(repo), err)
		}
		os.RemoveAll(filepath.Dir(c.lockPath(repo, "x")))
	}
	return nil
}

// onlySnapshot returns the repo's snapshot commit when it has exactly one.
func (c *Client) onlySnapshot(repo string) string {
	snaps, _ := os.ReadDir(filepath.Join(c.repoDir(repo), "snapshots"))
	if len(snaps) == 1 && IsCommit(snaps[0].Name()) {
		return snaps[0].Name()
	}
	return ""
}
