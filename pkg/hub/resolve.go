package hub

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/helexa/helexa/internal/envvars"
)

// resolveOnline asks the Hub for the revision's commit and files, downloads
// what the cache lacks and records refs/<revision>.
func (c *Client) resolveOnline(ctx context.Context, r Ref) (*Resolved, error) {
	info, err := c.fetchRepoInfo(ctx, r.Repo, r.Revision)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(info.Siblings))
	sha := map[string]string{}
	for i, s := range info.Siblings {
		names[i] = s.RFilename
		if s.LFS != nil {
			sha[s.RFilename] = strings.ToLower(s.LFS.SHA256)
		}
	}
	sel, err := selectFiles(r.Repo, names, r.Quant)
	if err != nil {
		return nil, err
	}
	if sel.Note != "" {
		c.emit(Event{Kind: EventNotice, Repo: r.Repo, Message: sel.Note})
	}
	if err := os.MkdirAll(c.repoDir(r.Repo), 0o755); err != nil {
		return nil, fmt.Errorf("create cache folder: %w", err)
	}
	if err := c.writeRef(r.Repo, r.Revision, info.SHA); err != nil {
		return nil, err
	}
	for _, f := range sel.Files {
		if err := c.fetchFile(ctx, r.Repo, info.SHA, f, sha[f]); err != nil {
			return nil, err
		}
	}
	return c.resolved(r, info.SHA, sel), nil
}

func (c *Client) resolved(r Ref, commit string, sel selection) *Resolved {
	res := &Resolved{
		Repo: r.Repo, Revision: r.Revision, Commit: commit, Quant: sel.Quant,
		Format: sel.Format, Files: sel.Files, Note: sel.Note,
	}
	canon := r
	canon.Quant = sel.Quant
	res.Ref = canon.String()
	if sel.Format == FormatGGUF {
		res.ModelPath = c.snapshotPath(r.Repo, commit, sel.Files[0])
	} else {
		res.ModelPath = filepath.Join(c.repoDir(r.Repo), "snapshots", commit)
	}
	return res
}

// resolveCached resolves from the cache alone; why says why the network is
// not used, for the error message.
func (c *Client) resolveCached(r Ref, why string) (*Resolved, error) {
	commit, err := c.cachedCommit(r)
	if err != nil {
		return nil, err
	}
	if commit == "" {
		return nil, fmt.Errorf("%w: %s@%s has never been pulled into %s (%s); %s",
			ErrNotCached, r.Repo, r.Revision, c.opts.CacheDir, why, pullFix(r))
	}
	dir := filepath.Join(c.repoDir(r.Repo), "snapshots", commit)
	files, err := snapshotFiles(dir)
	if err != nil {
		return nil, fmt.Errorf("read snapshot %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: snapshot %s of %s is missing from %s (%s); %s",
			ErrNotCached, short(commit), r.Repo, c.opts.CacheDir, why, pullFix(r))
	}
	sel, err := selectFiles(r.Repo, files, r.Quant)
	var qe *QuantError
	if errors.As(err, &qe) && len(qe.Ambiguous) == 0 {
		return nil, fmt.Errorf("%w: %s has no %s in the cache, only %s (%s); %s",
			ErrNotCached, r.Repo, qe.Want, strings.Join(qe.Available, ", "), why, pullFix(r))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNotCached, why, err)
	}
	var missing []string
	for _, f := range sel.Files {
		if !cachedFile(c.snapshotPath(r.Repo, commit, f)) {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s is missing %s (snapshot %s; %s); %s",
			ErrNotCached, r.Repo, strings.Join(missing, ", "), short(commit), why, pullFix(r))
	}
	return c.resolved(r, commit, sel), nil
}

// pullFix says how to get a reference the cache lacks, offline.
func pullFix(r Ref) string {
	return fmt.Sprintf("unset %s and run `helexa pull %s`", envvars.HFOffline.Name, r.String())
}

// cachedCommit maps the reference's revision to a cached commit ("" if none).
func (c *Client) cachedCommit(r Ref) (string, error) {
	if IsCommit(r.Revision) {
		if _, err := os.Stat(filepath.Join(c.repoDir(r.Repo), "snapshots", r.Revision)); err == nil {
			return r.Revision, nil
		}
	}
	commit, err := c.readRef(r.Repo, r.Revision)
	if err != nil {
		return "", err
	}
	if commit != "" && !IsCommit(commit) {
		return "", fmt.Errorf("cached ref %s of %s holds %q, not a commit id", r.Revision, r.Repo, commit)
	}
	if commit == "" && r.Revision == "main" {
		return c.soleSnapshot(r)
	}
	return commit, nil
}

// soleSnapshot answers a repository cached without refs/main (what
// huggingface_hub's hf_hub_download of one file at a commit leaves): its
// only snapshot, or an error naming the revisions to choose from.
func (c *Client) soleSnapshot(r Ref) (string, error) {
	entries, err := os.ReadDir(filepath.Join(c.repoDir(r.Repo), "snapshots"))
	if err != nil {
		return "", nil // nothing cached: the caller says so
	}
	var commits []string
	for _, e := range entries {
		if e.IsDir() && IsCommit(e.Name()) {
			commits = append(commits, e.Name())
		}
	}
	switch len(commits) {
	case 0:
		return "", nil
	case 1:
		return commits[0], nil
	}
	return "", fmt.Errorf("%w: %s has no refs/main but %d cached snapshots (%s); name one as %s@<commit>",
		ErrNotCached, r.Repo, len(commits), strings.Join(commits, ", "), r.Repo)
}

// ResolveLocal resolves a local reference (r.Local()) without a client:
// no cache or network is involved.
func ResolveLocal(r Ref) (*Resolved, error) { return resolveLocal(r) }

// resolveLocal accepts a .gguf file (a split model's first shard stands for
// all shards) or a directory with config.json and safetensors, or with GGUF
// files.
func resolveLocal(r Ref) (*Resolved, error) {
	fi, err := os.Stat(r.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &MissingPathError{Path: r.Path}
	}
	if err != nil {
		return nil, fmt.Errorf("local model %s: %w", r.Path, err)
	}
	res := &Resolved{Ref: r.String(), Local: true}
	if !fi.IsDir() {
		if r.Quant != "" {
			return nil, fmt.Errorf("%w: %s is a file, and :%s picks a quant among a directory's GGUF files; drop the :%s", ErrBadReference, r.Path, r.Quant, r.Quant)
		}
		if !strings.HasSuffix(strings.ToLower(r.Path), ".gguf") {
			return nil, fmt.Errorf("%w: %s is not a .gguf file; pass a .gguf file or a model directory", ErrBadReference, r.Path)
		}
		res.Format, res.ModelPath, res.Files = FormatGGUF, r.Path, []string{filepath.Base(r.Path)}
		res.Quant = QuantOf(r.Path)
		return res, nil
	}
	entries, err := os.ReadDir(r.Path)
	if err != nil {
		return nil, fmt.Errorf("local model %s: %w", r.Path, err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	sel, err := selectFiles(r.Path, names, r.Quant)
	if err != nil {
		return nil, err
	}
	if sel.Format == FormatSafetensors && !contains(names, "config.json") {
		return nil, fmt.Errorf("%w: %s has safetensors but no config.json", ErrNoWeights, r.Path)
	}
	res.Format, res.Files, res.Quant = sel.Format, sel.Files, sel.Quant
	res.ModelPath = r.Path
	if sel.Format == FormatGGUF {
		res.ModelPath = filepath.Join(r.Path, sel.Files[0])
	}
	return res, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
