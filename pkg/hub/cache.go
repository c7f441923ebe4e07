package hub

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/helexa/helexa/internal/fsutil"
)

// repoDir is <root>/models--{org}--{name}, as huggingface_hub names it.
func (c *Client) repoDir(repo string) string {
	return filepath.Join(c.opts.CacheDir, RepoFolderName(repo))
}

// RepoFolderName is the cache folder of a model repo: models--org--name.
func RepoFolderName(repo string) string {
	return "models--" + strings.ReplaceAll(repo, "/", "--")
}

// repoFromFolder inverts RepoFolderName ("" when the name is not a model folder).
func repoFromFolder(name string) string {
	rest, ok := strings.CutPrefix(name, "models--")
	if !ok {
		return ""
	}
	org, nm, ok := strings.Cut(rest, "--")
	if !ok || org == "" || nm == "" {
		return ""
	}
	return org + "/" + strings.ReplaceAll(nm, "--", "/")
}

// checkRelPath rejects repo file names that could escape a snapshot folder.
func checkRelPath(p string) error {
	if p == "" || strings.Contains(p, `\`) || strings.HasPrefix(p, "/") || filepath.IsAbs(p) || strings.ContainsRune(p, 0) {
		return fmt.Errorf("%w: %q (empty, absolute or with a backslash)", ErrUnsafePath, p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." || seg == "." || seg == "" {
			return fmt.Errorf("%w: %q (contains %q)", ErrUnsafePath, p, seg)
		}
	}
	return nil
}

// readRef returns the commit stored in refs/<rev>, or "" when absent.
func (c *Client) readRef(repo, rev string) (string, error) {
	if err := checkRelPath(rev); err != nil {
		return "", err
	}
	data, err := os.ReadFile(filepath.Join(c.repoDir(repo), "refs", filepath.FromSlash(rev)))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read cached ref %s of %s: %w", rev, repo, err)
	}
	return strings.TrimSpace(string(data)), nil
}

// writeRef stores commit in refs/<rev> (no trailing newline, like
// huggingface_hub), unless rev is the commit itself.
func (c *Client) writeRef(repo, rev, commit string) error {
	if rev == commit {
		return nil
	}
	if err := checkRelPath(rev); err != nil {
		return err
	}
	p := filepath.Join(c.repoDir(repo), "refs", filepath.FromSlash(rev))
	if cur, _ := os.ReadFile(p); string(cur) == commit {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("write ref: %w", err)
	}
	return writeFileAtomic(p, []byte(commit))
}

// writeFileAtomic writes a small cache file (a ref) atomically, private to
// the user as os.CreateTemp made it before fsutil existed.
func writeFileAtomic(p string, data []byte) error {
	if err := fsutil.WriteFileAtomic(p, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// snapshotPath is snapshots/<commit>/<file>.
func (c *Client) snapshotPath(repo, commit, file string) string {
	return filepath.Join(c.repoDir(repo), "snapshots", commit, filepath.FromSlash(file))
}

func (c *Client) blobPath(repo, etag string) string {
	return filepath.Join(c.repoDir(repo), "blobs", etag)
}

// lockPath is <root>/.locks/models--org--name/<etag>.lock, where
// huggingface_hub keeps its file locks too.
func (c *Client) lockPath(repo, etag string) string {
	return filepath.Join(c.opts.CacheDir, ".locks", RepoFolderName(repo), etag+".lock")
}

// cachedFile reports whether a snapshot entry exists and points at a
// readable file.
func cachedFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// linkSnapshot points snapshots/<commit>/<file> at blobs/<etag> with a
// relative symlink. Where symlinks are not possible (some Windows setups,
// FAT/exFAT drives) it does what huggingface_hub does: a blob this pull
// just downloaded moves into the snapshot (no second copy on disk), an
// older one is copied.
func (c *Client) linkSnapshot(repo, commit, file, etag string, newBlob bool) error {
	dst := c.snapshotPath(repo, commit, file)
	src := c.blobPath(repo, etag)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("create snapshot folder: %w", err)
	}
	rel, err := filepath.Rel(filepath.Dir(dst), src)
	if err != nil {
		return fmt.Errorf("link %s: %w", file, err)
	}
	tmp := dst + ".tmp-link"
	os.Remove(tmp)
	if err := c.symlink(rel, tmp); err == nil {
		if err := os.Rename(tmp, dst); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("link %s: %w", file, err)
		}
		return nil
	}
	if newBlob {
		if err := os.Rename(src, dst); err != nil {
			return fmt.Errorf("move %s into the snapshot: %w", file, err)
		}
		return nil
	}
	return copyFile(src, dst)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy blob: %w", err)
	}
	defer in.Close()
	tmp := dst + ".tmp-copy"
	out, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("copy blob: %w", err)
	}
	_, cerr := io.Copy(out, in)
	if err := errors.Join(cerr, out.Close()); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("copy blob to %s: %w", dst, err)
	}
	return os.Rename(tmp, dst)
}

// snapshotFiles lists the repo-relative files of a snapshot folder.
func snapshotFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.Contains(d.Name(), ".tmp-") {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return files, err
}
