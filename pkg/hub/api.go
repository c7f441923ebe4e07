package hub

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/helexa/helexa/internal/envvars"
)

// UnreachableError is a failure to reach the Hub at all (as opposed to an
// HTTP error status); Resolve falls back to the cache on it. Its message
// says which host, why in a few words and what to do; Err keeps the raw
// network error for --verbose.
type UnreachableError struct {
	Host   string // e.g. huggingface.co
	What   string // what was being fetched when a transfer broke off; "" for a request
	Reason string // DNS lookup failed, connection refused, timed out, ...
	Err    error
}

func newUnreachable(host, what string, err error) *UnreachableError {
	return &UnreachableError{Host: host, What: what, Reason: netReason(err), Err: err}
}

func (e *UnreachableError) Error() string {
	if e.What != "" {
		return fmt.Sprintf("%s: the connection to %s broke off (%s): check the network and run the command again to resume", e.What, e.Host, e.Reason)
	}
	return fmt.Sprintf("cannot reach %s (%s): check the network or %s; offline, %s=1 uses the cache",
		e.Host, e.Reason, envvars.HFEndpoint.Name, envvars.HFOffline.Name)
}

// Short is the host and the reason alone, for a notice that goes on
// without the network.
func (e *UnreachableError) Short() string {
	return fmt.Sprintf("cannot reach %s (%s)", e.Host, e.Reason)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Is makes every network failure match ErrUnreachable.
func (e *UnreachableError) Is(target error) bool { return target == ErrUnreachable }

// ErrUnreachable marks a request that could not reach the Hub (refused,
// no route, DNS failure, dropped connection).
var ErrUnreachable = errors.New("the Hub cannot be reached")

// netReason names a network failure in a few words.
func netReason(err error) string {
	var dns *net.DNSError
	var cert *tls.CertificateVerificationError
	var netErr net.Error
	switch {
	case errors.As(err, &dns):
		return "DNS lookup failed"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return "no route to the host"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.As(err, &cert):
		return "its TLS certificate is not trusted"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "timed out"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed"
	case strings.Contains(err.Error(), "proxyconnect"):
		return "the proxy failed"
	case strings.Contains(err.Error(), "tls:"):
		return "TLS handshake failed"
	}
	for inner := errors.Unwrap(err); inner != nil; inner = errors.Unwrap(inner) {
		err = inner // the innermost cause is the shortest to say
	}
	return err.Error()
}

// hostOf is the host of URL u, or u itself when it does not parse.
func hostOf(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return u
}

// refused reports a connection that can not succeed by retrying at once:
// nothing listens, or the name does not resolve.
func refused(err error) bool {
	var dns *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENETUNREACH) ||
		errors.Is(err, syscall.EHOSTUNREACH) || (errors.As(err, &dns) && !dns.IsTemporary)
}

// repoInfo is the part of GET /api/models/{repo}/revision/{rev} we use.
type repoInfo struct {
	ID       string    `json:"id"`
	SHA      string    `json:"sha"`
	Siblings []sibling `json:"siblings"`
}

type sibling struct {
	RFilename string `json:"rfilename"`
	Size      int64  `json:"size"`
	LFS       *struct {
		SHA256 string `json:"sha256"`
		Size   int64  `json:"size"`
	} `json:"lfs"`
}

// fileMeta is what a HEAD on the resolve URL tells (as in huggingface_hub's
// get_hf_file_metadata).
type fileMeta struct {
	Commit   string
	ETag     string // normalized: no W/ prefix, no quotes
	Size     int64  // -1 when unknown
	Location string // where to GET the content (the CDN URL for LFS files)
}

// resolveURL is {endpoint}/{repo}/resolve/{rev}/{path}, escaped as
// huggingface_hub's hf_hub_url does.
func (c *Client) resolveURL(repo, rev, file string) string {
	segs := strings.Split(file, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return c.opts.Endpoint + "/" + repo + "/resolve/" + url.PathEscape(rev) + "/" + strings.Join(segs, "/")
}

// fetchRepoInfo gets the commit and file list for a revision.
func (c *Client) fetchRepoInfo(ctx context.Context, repo, rev string) (*repoInfo, error) {
	u := c.opts.Endpoint + "/api/models/" + repo + "/revision/" + url.PathEscape(rev) + "?blobs=true"
	what := fmt.Sprintf("repo %s at revision %s", repo, rev)
	var info repoInfo
	err := c.retry(ctx, what, func() error {
		reqCtx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		resp, err := c.do(reqCtx, http.MethodGet, u, true, nil)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return httpError(resp, what)
		}
		body := newStallReader(resp.Body, c.opts.ReadTimeout, cancel)
		defer body.stop()
		if err := json.NewDecoder(io.LimitReader(body, 64<<20)).Decode(&info); err != nil {
			if errors.Is(context.Cause(reqCtx), ErrStalled) {
				return fmt.Errorf("%s: %w: the Hub sent nothing for %v", what, ErrStalled, c.opts.ReadTimeout)
			}
			return fmt.Errorf("%s: bad JSON from the Hub: %w", what, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !IsCommit(info.SHA) {
		return nil, fmt.Errorf("%s: the Hub returned an invalid commit id %q", what, info.SHA)
	}
	for _, s := range info.Siblings {
		if err := checkRelPath(s.RFilename); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	return &info, nil
}

// headFile gets a file's metadata, following only same-host (relative)
// redirects, as huggingface_hub does, so the CDN location is returned rather
// than fetched.
func (c *Client) headFile(ctx context.Context, repo, rev, file string) (*fileMeta, error) {
	u := c.resolveURL(repo, rev, file)
	what := fmt.Sprintf("%s/%s", repo, file)
	var meta *fileMeta
	err := c.retry(ctx, what, func() error {
		var err error
		meta, err = c.headOnce(ctx, u, what)
		return err
	})
	return meta, err
}

func (c *Client) headOnce(ctx context.Context, u, what string) (*fileMeta, error) {
	for hops := 0; hops < 10; hops++ {
		resp, err := c.do(ctx, http.MethodHead, u, true, http.Header{"Accept-Encoding": {"identity"}})
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		if resp.StatusCode >= 400 {
			return nil, httpError(resp, what)
		}
		loc := resp.Header.Get("Location")
		base, _ := url.Parse(u)
		if resp.StatusCode >= 300 && loc != "" {
			rel, err := url.Parse(loc)
			if err != nil {
				return nil, fmt.Errorf("%s: bad redirect %q: %w", what, loc, err)
			}
			target := base.ResolveReference(rel)
			if rel.Host == "" {
				u = target.String() // relative redirect (renamed repo): follow it, keep the token
				continue
			}
			loc = target.String()
		} else {
			loc = u
		}
		m := &fileMeta{
			Commit:   resp.Header.Get("X-Repo-Commit"),
			ETag:     normalizeETag(firstNonEmpty(resp.Header.Get("X-Linked-Etag"), resp.Header.Get("ETag"))),
			Size:     parseSize(firstNonEmpty(resp.Header.Get("X-Linked-Size"), resp.Header.Get("Content-Length"))),
			Location: loc,
		}
		if m.ETag == "" {
			return nil, fmt.Errorf("%s: the Hub sent no ETag; cannot place the file in the cache", what)
		}
		if strings.ContainsAny(m.ETag, `/\`) || m.ETag == "." || m.ETag == ".." {
			return nil, fmt.Errorf("%s: %w: ETag %q", what, ErrUnsafePath, m.ETag)
		}
		return m, nil
	}
	return nil, fmt.Errorf("%s: too many redirects", what)
}

func normalizeETag(e string) string {
	return strings.Trim(strings.TrimPrefix(e, "W/"), `"`)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func parseSize(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// do sends one request without following redirects. auth adds the token;
// callers pass false for URLs on another host than the endpoint.
func (c *Client) do(ctx context.Context, method, u string, auth bool, h http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, fmt.Errorf("build request %s: %w", u, err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", "helexa (huggingface_hub-compatible)")
	if auth && c.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.Token)
	}
	hc := *c.http
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, newUnreachable(hostOf(u), "", err)
	}
	return resp, nil
}

func httpError(resp *http.Response, what string) error {
	msg := resp.Header.Get("X-Error-Message")
	if msg == "" && resp.Request != nil && resp.Request.Method != http.MethodHead {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		var j struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &j) == nil && j.Error != "" {
			msg = j.Error
		} else {
			msg = strings.TrimSpace(string(b))
		}
	}
	e := &HTTPError{Status: resp.StatusCode, Code: resp.Header.Get("X-Error-Code"), Message: msg, What: what,
		RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"))}
	if resp.Request != nil {
		e.URL = resp.Request.URL.String()
	}
	return e
}

func parseRetryAfter(s string) time.Duration {
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	return 0
}

// retryable says whether an attempt's error is worth another try.
func retryable(err error) bool {
	if errors.Is(err, errLinkExpired) { // wraps the CDN's 403, but a fresh link is ready
		return true
	}
	var he *HTTPError
	if errors.As(err, &he) {
		return he.retryable()
	}
	var ne *UnreachableError
	if errors.As(err, &ne) && refused(ne.Err) {
		return false // offline: retrying only delays the answer
	}
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, errDropped) || errors.Is(err, ErrStalled)
}

// retry runs f until it succeeds, fails permanently or runs out of tries,
// sleeping with exponential backoff (and jitter) in between.
func (c *Client) retry(ctx context.Context, what string, f func() error) error {
	var err error
	for attempt := 0; ; attempt++ {
		err = f()
		if err == nil || !retryable(err) || attempt >= c.opts.MaxRetries || ctx.Err() != nil {
			break
		}
		if err := sleepCtx(ctx, c.backoff(attempt, err)); err != nil {
			return err
		}
	}
	return err
}

func (c *Client) backoff(attempt int, err error) time.Duration {
	d := c.opts.RetryBase << min(attempt, 10)
	d = min(d, 10*time.Second)
	var he *HTTPError
	if errors.As(err, &he) && he.RetryAfter > d {
		d = min(he.RetryAfter, 60*time.Second)
	}
	return d + time.Duration(rand.Int64N(int64(d)/4+1))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
