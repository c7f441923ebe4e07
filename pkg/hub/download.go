package hub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
)

var (
	sha256Re = regexp.MustCompile(`^[0-9a-f]{64}$`)
	gitSHARe = regexp.MustCompile(`^[0-9a-f]{40}$`)
	// errDropped: the server closed the connection before sending the range.
	errDropped = errors.New("connection dropped before the end of the file")
	// errNoRange: the server answered a range request with the whole file.
	errNoRange = errors.New("server ignored the Range header")
	// errLinkExpired: the CDN refused a signed link; a fresh one was asked for.
	errLinkExpired = errors.New("the download link expired")
)

// linkExpired: a CDN (a host other than the Hub's) refusing a link the Hub
// handed out means the link's signature expired, not that access is denied.
func linkExpired(status int, u, endpoint string) bool {
	return (status == http.StatusUnauthorized || status == http.StatusForbidden || status == http.StatusGone) && !sameHost(u, endpoint)
}

// fetchFile makes snapshots/<commit>/<file> exist, reusing a cached blob
// when there is one and downloading it otherwise.
func (c *Client) fetchFile(ctx context.Context, repo, commit, file, lfsSHA string) error {
	if cachedFile(c.snapshotPath(repo, commit, file)) {
		c.emit(Event{Kind: EventCached, Repo: repo, File: file})
		return nil
	}
	meta, err := c.headFile(ctx, repo, commit, file)
	if err != nil {
		return err
	}
	name, err := blobName(meta, lfsSHA, repo+"/"+file)
	if err != nil {
		return err
	}
	blob := c.blobPath(repo, name)
	if blobComplete(blob, meta.Size) {
		c.emit(Event{Kind: EventCached, Repo: repo, File: file, Total: meta.Size, Message: "reusing cached blob"})
		return c.linkSnapshot(repo, commit, file, name, false)
	}
	unlock, err := lockFile(ctx, c.lockPath(repo, name))
	if err != nil {
		return err
	}
	defer unlock()
	newBlob := false
	if !blobComplete(blob, meta.Size) { // another process may have finished it meanwhile
		if err := c.download(ctx, repo, commit, file, meta, lfsSHA, blob); err != nil {
			return err
		}
		newBlob = true
	}
	if err := c.linkSnapshot(repo, commit, file, name, newBlob); err != nil {
		return err
	}
	c.emit(Event{Kind: EventDone, Repo: repo, File: file, Bytes: meta.Size, Total: meta.Size})
	return nil
}

// blobName is the name of a file's blob: the hash it is verified against,
// which is the LFS sha256 the API listed when there is one (whatever the
// X-Linked-Etag says), else the ETag, which must then be a sha256 or git's
// blob sha1. A blob's name is thus always its verified content hash.
func blobName(meta *fileMeta, lfsSHA, what string) (string, error) {
	if lfsSHA != "" {
		if !sha256Re.MatchString(lfsSHA) {
			return "", fmt.Errorf("%s: %w: the Hub's LFS sha256 %q is not a hex sha256", what, ErrUnsafePath, lfsSHA)
		}
		return lfsSHA, nil
	}
	if !sha256Re.MatchString(meta.ETag) && !gitSHARe.MatchString(meta.ETag) {
		return "", fmt.Errorf("%s: the Hub's ETag %q is not a content hash, so the file cannot be verified", what, meta.ETag)
	}
	return meta.ETag, nil
}

func blobComplete(p string, size int64) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && (size < 0 || fi.Size() == size)
}

// download fetches a file into blob via blob.incomplete, verifies it and
// renames it into place. The caller holds the blob's lock.
func (c *Client) download(ctx context.Context, repo, commit, file string, meta *fileMeta, lfsSHA, blob string) error {
	if err := os.MkdirAll(filepath.Dir(blob), 0o755); err != nil {
		return fmt.Errorf("create blobs folder: %w", err)
	}
	what := repo + "/" + file
	auth := sameHost(meta.Location, c.opts.Endpoint)
	dl := newTransfer(c, blob, meta.Location, auth, what, meta.Size)
	dl.renewURL = func(ctx context.Context) (*fileMeta, error) { return c.headFile(ctx, repo, commit, file) }
	if err := dl.run(ctx, repo, file); err != nil {
		return err
	}
	c.emit(Event{Kind: EventVerify, Repo: repo, File: file, Bytes: meta.Size, Total: meta.Size})
	if err := verifyFile(ctx, dl.part, meta, lfsSHA, what); err != nil {
		if !errors.Is(err, ErrChecksum) {
			return err // e.g. interrupted: the complete partial file is checked next time
		}
		os.Remove(dl.part)
		return err
	}
	if err := os.Rename(dl.part, blob); err != nil {
		return fmt.Errorf("move %s into the cache: %w", dl.part, err)
	}
	return nil
}

func sameHost(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && strings.EqualFold(ua.Host, ub.Host)
}

// verifyFile checks the size and hash of the downloaded file at p: the LFS
// sha256 (from the API or an ETag that is one), or git's blob sha1 for small
// files whose ETag is one. A mismatch is ErrChecksum.
func verifyFile(ctx context.Context, p string, meta *fileMeta, lfsSHA, what string) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("verify %s: %w", what, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("verify %s: %w", what, err)
	}
	if meta.Size >= 0 && fi.Size() != meta.Size {
		return fmt.Errorf("%w: %s is %d bytes, the Hub said %d; the partial file was deleted, run the pull again", ErrChecksum, what, fi.Size(), meta.Size)
	}
	want, h := lfsSHA, hash.Hash(sha256.New())
	switch {
	case want != "":
	case sha256Re.MatchString(meta.ETag):
		want = meta.ETag
	case gitSHARe.MatchString(meta.ETag):
		want, h = meta.ETag, sha1.New()
		fmt.Fprintf(h, "blob %d\x00", fi.Size())
	default:
		return nil
	}
	if _, err := io.Copy(h, ctxReader{ctx, f}); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: verification interrupted (the downloaded file is kept and checked next time): %w", what, ctx.Err())
		}
		return fmt.Errorf("verify %s: %w", what, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != strings.ToLower(want) {
		return fmt.Errorf("%w: %s has hash %s, the Hub said %s; the partial file was deleted, run the pull again", ErrChecksum, what, got, want)
	}
	return nil
}

// ctxReader stops reading once ctx is done (hashing a large file takes a while).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// getRange GETs [from, to) of the file (to < 0: to the end) and copies it
// into w at offset from, reporting bytes through add.
func (d *transfer) getRange(ctx context.Context, from, to int64, add func(int64)) (int64, error) {
	h := http.Header{"Accept-Encoding": {"identity"}}
	if from > 0 || to >= 0 {
		r := fmt.Sprintf("bytes=%d-", from)
		if to >= 0 {
			r += fmt.Sprint(to - 1)
		}
		h.Set("Range", r)
	}
	u, auth := d.location()
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	resp, err := d.c.doFollow(reqCtx, u, auth, h)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusPartialContent:
	case resp.StatusCode == http.StatusOK && h.Get("Range") != "":
		return 0, errNoRange
	case resp.StatusCode == http.StatusOK:
	case linkExpired(resp.StatusCode, u, d.c.opts.Endpoint):
		// Not the Hub's gated-repo 403: the CDN refuses a link the Hub signed.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
		cause := fmt.Errorf("the download server answered HTTP %d (%s)", resp.StatusCode, strings.TrimSpace(string(body)))
		if err := d.renew(ctx, u, cause); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("%s: %w: %w", d.what, errLinkExpired, cause)
	default:
		return 0, httpError(resp, d.what)
	}
	limit := int64(-1) // the most this response may carry: the range, or the rest of the declared size
	switch {
	case to >= 0:
		limit = to - from
	case d.size >= 0:
		limit = d.size - from
	}
	body := newStallReader(resp.Body, d.c.opts.ReadTimeout, cancel)
	defer body.stop()
	n, err := copyAt(d.f, body, from, limit, add)
	if err != nil {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		var we *writeError
		switch {
		case errors.As(err, &we):
			return n, fmt.Errorf("%s: %w", d.what, we)
		case errors.Is(context.Cause(reqCtx), ErrStalled):
			return n, fmt.Errorf("%s: %w: the server sent nothing for %v", d.what, ErrStalled, d.c.opts.ReadTimeout)
		case errors.Is(err, ErrOversize):
			return n, fmt.Errorf("%s: %w (%d bytes)", d.what, err, d.size)
		}
		return n, newUnreachable(hostOf(u), d.what, err)
	}
	if to >= 0 && from+n < to {
		return n, fmt.Errorf("%s: %w", d.what, errDropped)
	}
	return n, nil
}

// copyAt writes what r sends into f from offset off; limit >= 0 is the
// most r may send: nothing past it is written, and more is ErrOversize.
func copyAt(f *os.File, r io.Reader, off, limit int64, add func(int64)) (int64, error) {
	buf := make([]byte, 256<<10)
	var n int64
	for {
		if limit >= 0 && n >= limit {
			// One byte more than declared fails the transfer; EOF ends it.
			if k, err := r.Read(buf[:1]); k > 0 {
				return n, ErrOversize
			} else if err == io.EOF {
				return n, nil
			} else if err != nil {
				return n, err
			}
			continue
		}
		want := len(buf)
		if limit >= 0 {
			want = int(min(int64(want), limit-n))
		}
		k, err := r.Read(buf[:want])
		if k > 0 {
			if _, werr := f.WriteAt(buf[:k], off+n); werr != nil {
				return n, &writeError{path: f.Name(), err: werr}
			}
			n += int64(k)
			add(int64(k))
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// ErrDiskFull marks a download that stopped because the cache's disk is
// full; the partial file is kept and resumes once there is room.
var ErrDiskFull = errors.New("the disk is full")

// writeError is a failure to write downloaded bytes to the cache. It is
// not a network error: retrying cannot help, so it is reported at once.
type writeError struct {
	path string
	err  error
}

func (e *writeError) Error() string {
	if errors.Is(e.err, syscall.ENOSPC) {
		return fmt.Sprintf("writing %s: %v; free some space and pull again (the partial download is kept and resumes)", e.path, ErrDiskFull)
	}
	return fmt.Sprintf("writing %s: %v (the partial download is kept and resumes)", e.path, e.err)
}

func (e *writeError) Unwrap() []error {
	if errors.Is(e.err, syscall.ENOSPC) {
		return []error{ErrDiskFull, e.err}
	}
	return []error{e.err}
}

// doFollow GETs u following redirects itself; the token is sent only while
// the request stays on the endpoint's host.
func (c *Client) doFollow(ctx context.Context, u string, auth bool, h http.Header) (*http.Response, error) {
	for hops := 0; hops < 10; hops++ {
		resp, err := c.do(ctx, http.MethodGet, u, auth, h)
		if err != nil {
			return nil, err
		}
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode >= 400 || loc == "" {
			return resp, nil
		}
		resp.Body.Close()
		base, _ := url.Parse(u)
		next, err := base.Parse(loc)
		if err != nil {
			return nil, fmt.Errorf("bad redirect %q: %w", loc, err)
		}
		auth = auth && strings.EqualFold(next.Host, base.Host)
		u = next.String()
	}
	return nil, fmt.Errorf("too many redirects fetching %s", u)
}
