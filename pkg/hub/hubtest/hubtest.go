// Package hubtest is a fake Hugging Face Hub for tests: an httptest server
// speaking the parts of the Hub protocol pkg/hub uses (revision API, resolve
// URLs with LFS headers and redirects to a second "CDN" server, Range
// requests) plus injectable faults (dropped connections, stalls, oversized
// bodies, wrong ETags, corrupted bodies, error statuses, gated repos). Other packages' tests can use it to pull
// tiny models without a network.
package hubtest

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Hub is the fake Hub. Its zero value is not usable; call New.
type Hub struct {
	URL    string // the endpoint (HF_ENDPOINT)
	CDNURL string // where LFS files are redirected to

	mu     sync.Mutex
	repos  map[string]*repo
	faults map[string]*fault // key repo/file
	stats  map[string]*Stats
	cdnTok bool // an Authorization header reached the CDN
	noRng  bool
	// linkUses > 0: each CDN link (one per redirect) serves that many GETs,
	// then answers 403 like an expired signed URL.
	linkUses int
	links    int            // redirects issued
	linkUsed map[string]int // GETs served per link
}

type repo struct {
	gated   bool
	token   string
	refs    map[string]string            // branch/tag → commit
	commits map[string]map[string][]byte // commit → path → content
}

type fault struct {
	rate       int64 // body bytes per second; 0 = unlimited
	dropAfter  int64
	dropTimes  int
	corrupt    bool
	status     int
	statusLeft int
	extra      int64  // bytes sent past the file, without a Content-Length
	stallAfter int64  // body bytes before the response stops sending
	stallTimes int    // content GETs left that stall (<0: every one)
	linkedETag string // X-Linked-Etag to send instead of the sha256
}

// Stats counts what the fake served for one file.
type Stats struct {
	Heads  int      // HEAD requests on the resolve URL
	Gets   int      // content GETs (resolve or CDN)
	Ranges []string // Range headers seen on content GETs ("" for none)
	Bytes  int64    // body bytes written
}

// New starts the fake Hub and its CDN; both stop when the test ends.
func New(t testing.TB) *Hub {
	h := &Hub{repos: map[string]*repo{}, faults: map[string]*fault{}, stats: map[string]*Stats{}}
	hub := httptest.NewServer(http.HandlerFunc(h.serveHub))
	cdn := httptest.NewServer(http.HandlerFunc(h.serveCDN))
	t.Cleanup(hub.Close)
	t.Cleanup(cdn.Close)
	h.URL = hub.URL
	// A different host name than the hub (localhost vs 127.0.0.1), like a real CDN.
	h.CDNURL = strings.Replace(cdn.URL, "127.0.0.1", "localhost", 1)
	return h
}

// IsLFS reports whether the fake stores a file in LFS (weights) rather than git.
func IsLFS(path string) bool {
	return strings.HasSuffix(path, ".gguf") || strings.HasSuffix(path, ".safetensors") || strings.HasSuffix(path, ".bin")
}

// SHA256 is the hex sha256 of data (an LFS file's oid and ETag).
func SHA256(data []byte) string { s := sha256.Sum256(data); return hex.EncodeToString(s[:]) }

// GitSHA1 is git's blob id of data (a regular file's ETag).
func GitSHA1(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// ETag is the cache blob name huggingface_hub uses for a file's content.
func ETag(path string, data []byte) string {
	if IsLFS(path) {
		return SHA256(data)
	}
	return GitSHA1(data)
}

// AddRepo creates (or replaces the main branch of) a model repo and
// returns the new commit id.
func (h *Hub) AddRepo(id string, files map[string][]byte) string {
	return h.AddRevision(id, "main", files)
}

// AddRevision commits files to the repo under branch or tag rev and returns
// the commit id.
func (h *Hub) AddRevision(id, rev string, files map[string][]byte) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.repos[id]
	if r == nil {
		r = &repo{refs: map[string]string{}, commits: map[string]map[string][]byte{}}
		h.repos[id] = r
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	sum := sha1.New()
	fmt.Fprintf(sum, "%s\x00%s\x00%d", id, rev, len(r.commits))
	copied := map[string][]byte{}
	for _, n := range names {
		fmt.Fprintf(sum, "%s\x00%s\x00", n, SHA256(files[n]))
		copied[n] = bytes.Clone(files[n])
	}
	commit := hex.EncodeToString(sum.Sum(nil))
	r.commits[commit] = copied
	r.refs[rev] = commit
	return commit
}

// Gate makes a repo require "Bearer token" (401 without a token, 403 with
// another one).
func (h *Hub) Gate(id, token string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.repos[id].gated, h.repos[id].token = true, token
}

// DropAfter makes the next `times` content GETs of the file close the
// connection after n body bytes.
func (h *Hub) DropAfter(id, file string, n int64, times int) {
	h.withFault(id, file, func(f *fault) { f.dropAfter, f.dropTimes = n, times })
}

// Oversize makes every content GET of the file answer 200 without a
// Content-Length and send extra bytes after the file, as a hostile server
// would to fill the disk.
func (h *Hub) Oversize(id, file string, extra int64) {
	h.withFault(id, file, func(f *fault) { f.extra = extra })
}

// StallAfter makes the next `times` content GETs of the file (times < 0:
// every one) stop sending after n body bytes, keeping the connection open
// until the client gives up.
func (h *Hub) StallAfter(id, file string, n int64, times int) {
	h.withFault(id, file, func(f *fault) { f.stallAfter, f.stallTimes = n, times })
}

// LinkedETag makes the Hub announce etag as the LFS file's X-Linked-Etag
// (the API's lfs.sha256 stays right).
func (h *Hub) LinkedETag(id, file, etag string) {
	h.withFault(id, file, func(f *fault) { f.linkedETag = etag })
}

// Corrupt makes every content GET of the file serve a body with a flipped byte.
func (h *Hub) Corrupt(id, file string) { h.withFault(id, file, func(f *fault) { f.corrupt = true }) }

// FailWith answers the next `times` requests touching the file (file "" =
// the repo's revision API) with status, e.g. 429 or 503.
func (h *Hub) FailWith(id, file string, status, times int) {
	h.withFault(id, file, func(f *fault) { f.status, f.statusLeft = status, times })
}

// Throttle makes every content GET of the file send its body at about
// bytesPerSecond (0 lifts the limit), so tests can interrupt a download
// midway or make two downloads overlap.
func (h *Hub) Throttle(id, file string, bytesPerSecond int64) {
	h.withFault(id, file, func(f *fault) { f.rate = bytesPerSecond })
}

// ExpireLinks makes every CDN link the Hub redirects to good for `uses`
// content GETs; after that the CDN answers 403 "Request has expired", as a
// signed CDN URL does after its expiry time. 0 turns expiry off.
func (h *Hub) ExpireLinks(uses int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.linkUses, h.linkUsed = uses, map[string]int{}
}

// DisableRanges makes the CDN ignore Range headers (answer 200 with the whole file).
func (h *Hub) DisableRanges() { h.mu.Lock(); h.noRng = true; h.mu.Unlock() }

// Stats returns a copy of the counters for one file.
func (h *Hub) Stats(id, file string) Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.stat(id + "/" + file)
	c := *s
	c.Ranges = append([]string(nil), s.Ranges...)
	return c
}

// AuthReachedCDN reports whether any request to the CDN carried an
// Authorization header (it must not: the token is only for the Hub host).
func (h *Hub) AuthReachedCDN() bool { h.mu.Lock(); defer h.mu.Unlock(); return h.cdnTok }

func (h *Hub) withFault(id, file string, f func(*fault)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := id + "/" + file
	if h.faults[k] == nil {
		h.faults[k] = &fault{}
	}
	f(h.faults[k])
}

func (h *Hub) stat(k string) *Stats {
	if h.stats[k] == nil {
		h.stats[k] = &Stats{}
	}
	return h.stats[k]
}

// takeStatus consumes one injected error status for key k (0 if none).
func (h *Hub) takeStatus(k string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if f := h.faults[k]; f != nil && f.statusLeft > 0 {
		f.statusLeft--
		return f.status
	}
	return 0
}

// failInjected answers with an injected error status for key k, if one is
// left, and reports whether it did.
func (h *Hub) failInjected(w http.ResponseWriter, k string) bool {
	s := h.takeStatus(k)
	if s == 0 {
		return false
	}
	hubError(w, s, "", http.StatusText(s))
	return true
}

func hubError(w http.ResponseWriter, status int, code, msg string) {
	if code != "" {
		w.Header().Set("X-Error-Code", code)
	}
	w.Header().Set("X-Error-Message", msg)
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "0")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// lookup finds the repo and the commit for rev, writing the Hub's error
// (gated/401/403, RepoNotFound, RevisionNotFound) when it fails.
func (h *Hub) lookup(w http.ResponseWriter, r *http.Request, id, rev string) (*repo, string, bool) {
	h.mu.Lock()
	rp := h.repos[id]
	h.mu.Unlock()
	if rp == nil {
		hubError(w, http.StatusNotFound, "RepoNotFound", "Repository Not Found for url: "+r.URL.String())
		return nil, "", false
	}
	if rp.gated {
		switch auth := r.Header.Get("Authorization"); {
		case auth == "":
			hubError(w, http.StatusUnauthorized, "GatedRepo", "Access to model "+id+" is restricted. You must have access to it and be authenticated to access it. Please log in.")
			return nil, "", false
		case auth != "Bearer "+rp.token:
			hubError(w, http.StatusForbidden, "GatedRepo", "Access to model "+id+" is restricted and you are not in the authorized list.")
			return nil, "", false
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	commit := rp.refs[rev]
	if commit == "" && rp.commits[rev] != nil {
		commit = rev
	}
	if commit == "" {
		hubError(w, http.StatusNotFound, "RevisionNotFound", "Invalid rev id: "+rev)
		return nil, "", false
	}
	return rp, commit, true
}

// splitPath cuts an escaped URL path into unescaped segments.
func splitPath(p string) []string {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	for i, s := range parts {
		if u, err := url.PathUnescape(s); err == nil {
			parts[i] = u
		}
	}
	return parts
}

func (h *Hub) serveHub(w http.ResponseWriter, r *http.Request) {
	parts := splitPath(r.URL.EscapedPath())
	switch {
	case len(parts) == 6 && parts[0] == "api" && parts[1] == "models" && parts[4] == "revision":
		h.serveInfo(w, r, parts[2]+"/"+parts[3], parts[5])
	case len(parts) >= 5 && parts[2] == "resolve":
		h.serveResolve(w, r, parts[0]+"/"+parts[1], parts[3], strings.Join(parts[4:], "/"))
	default:
		http.NotFound(w, r)
	}
}

type siblingJSON struct {
	RFilename string   `json:"rfilename"`
	Size      int64    `json:"size,omitempty"`
	BlobID    string   `json:"blobId,omitempty"`
	LFS       *lfsJSON `json:"lfs,omitempty"`
}

type lfsJSON struct {
	SHA256      string `json:"sha256"`
	Size        int64  `json:"size"`
	PointerSize int    `json:"pointerSize"`
}

func (h *Hub) serveInfo(w http.ResponseWriter, r *http.Request, id, rev string) {
	if h.failInjected(w, id+"/") {
		return
	}
	rp, commit, ok := h.lookup(w, r, id, rev)
	if !ok {
		return
	}
	h.mu.Lock()
	files := rp.commits[commit]
	var sib []siblingJSON
	for name, data := range files {
		s := siblingJSON{RFilename: name}
		if r.URL.Query().Get("blobs") == "true" {
			s.Size, s.BlobID = int64(len(data)), GitSHA1(data)
			if IsLFS(name) {
				s.LFS = &lfsJSON{SHA256: SHA256(data), Size: int64(len(data)), PointerSize: 134}
			}
		}
		sib = append(sib, s)
	}
	h.mu.Unlock()
	sort.Slice(sib, func(i, j int) bool { return sib[i].RFilename < sib[j].RFilename })
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "sha": commit, "siblings": sib, "gated": rp.gated})
}

func (h *Hub) serveResolve(w http.ResponseWriter, r *http.Request, id, rev, file string) {
	if h.failInjected(w, id+"/"+file) {
		return
	}
	rp, commit, ok := h.lookup(w, r, id, rev)
	if !ok {
		return
	}
	h.mu.Lock()
	data, found := rp.commits[commit][file]
	if r.Method == http.MethodHead {
		h.stat(id+"/"+file).Heads++
	}
	h.mu.Unlock()
	if !found {
		hubError(w, http.StatusNotFound, "EntryNotFound", file+" does not exist on \""+rev+"\"")
		return
	}
	w.Header().Set("X-Repo-Commit", commit)
	if IsLFS(file) {
		sum := SHA256(data)
		w.Header().Set("ETag", `"`+GitSHA1([]byte("version https://git-lfs.github.com/spec/v1\noid sha256:"+sum))+`"`)
		linked := sum
		h.mu.Lock()
		if f := h.faults[id+"/"+file]; f != nil && f.linkedETag != "" {
			linked = f.linkedETag
		}
		h.mu.Unlock()
		w.Header().Set("X-Linked-Etag", `"`+linked+`"`)
		w.Header().Set("X-Linked-Size", fmt.Sprint(len(data)))
		h.mu.Lock()
		h.links++
		link := h.links
		h.mu.Unlock()
		loc := fmt.Sprintf("%s/blobs/%s?repo=%s&file=%s&sig=%d", h.CDNURL, sum, url.QueryEscape(id), url.QueryEscape(file), link)
		http.Redirect(w, r, loc, http.StatusFound)
		return
	}
	w.Header().Set("ETag", `"`+GitSHA1(data)+`"`)
	h.serveContent(w, r, id, file, data)
}

func (h *Hub) serveCDN(w http.ResponseWriter, r *http.Request) {
	id, file := r.URL.Query().Get("repo"), r.URL.Query().Get("file")
	h.mu.Lock()
	if r.Header.Get("Authorization") != "" {
		h.cdnTok = true
	}
	if h.linkUses > 0 && r.Method == http.MethodGet {
		sig := r.URL.Query().Get("sig")
		if h.linkUsed[sig] >= h.linkUses {
			h.mu.Unlock()
			http.Error(w, "<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>", http.StatusForbidden)
			return
		}
		h.linkUsed[sig]++
	}
	rp := h.repos[id]
	var data []byte
	found := false
	if rp != nil {
		for _, files := range rp.commits {
			if d, ok := files[file]; ok && "/blobs/"+SHA256(d) == r.URL.Path {
				data, found = d, true
			}
		}
	}
	h.mu.Unlock()
	if !found {
		http.Error(w, "no such blob", http.StatusNotFound)
		return
	}
	if h.failInjected(w, id+"/"+file) {
		return
	}
	h.serveContent(w, r, id, file, data)
}

// serveContent serves data with Range support and the file's faults.
func (h *Hub) serveContent(w http.ResponseWriter, r *http.Request, id, file string, data []byte) {
	k := id + "/" + file
	h.mu.Lock()
	f := h.faults[k]
	drop, stall, rate, extra := int64(-1), int64(-1), int64(0), int64(0)
	if f != nil {
		rate = f.rate
	}
	if r.Method == http.MethodGet {
		st := h.stat(k)
		st.Gets++
		st.Ranges = append(st.Ranges, r.Header.Get("Range"))
		if f != nil && f.dropTimes > 0 {
			f.dropTimes--
			drop = f.dropAfter
		}
		if f != nil && f.stallTimes != 0 {
			if f.stallTimes > 0 {
				f.stallTimes--
			}
			stall = f.stallAfter
		}
		if f != nil {
			extra = f.extra
		}
	}
	if f != nil && f.corrupt && len(data) > 0 {
		data = bytes.Clone(data)
		data[len(data)/2] ^= 0xff
	}
	if h.noRng {
		r.Header.Del("Range")
	}
	h.mu.Unlock()
	cw := &countingWriter{ResponseWriter: w, h: h, key: k, limit: drop, rate: rate, stall: stall, done: r.Context().Done()}
	if extra > 0 {
		w.WriteHeader(http.StatusOK) // no Content-Length: the body is chunked
		_, _ = cw.Write(data)
		_, _ = cw.Write(make([]byte, extra))
		return
	}
	http.ServeContent(cw, r, "", time.Time{}, bytes.NewReader(data))
}

// countingWriter counts body bytes, aborts the connection at limit and
// paces the body at rate bytes per second.
type countingWriter struct {
	http.ResponseWriter
	h     *Hub
	key   string
	limit int64
	rate  int64
	stall int64           // >= 0: stop sending after this many bytes
	done  <-chan struct{} // the request's end
	n     int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.rate <= 0 {
		return c.write(p)
	}
	piece := max(int(c.rate/50), 1) // about 50 writes a second
	written := 0
	for len(p) > 0 {
		k := min(piece, len(p))
		n, err := c.write(p[:k])
		written += n
		if err != nil {
			return written, err
		}
		if fl, ok := c.ResponseWriter.(http.Flusher); ok {
			fl.Flush()
		}
		p = p[k:]
		time.Sleep(time.Duration(int64(k) * int64(time.Second) / c.rate))
	}
	return written, nil
}

func (c *countingWriter) write(p []byte) (int, error) {
	if c.stall >= 0 && c.n+int64(len(p)) > c.stall {
		k, _ := c.ResponseWriter.Write(p[:c.stall-c.n])
		c.add(int64(k))
		if fl, ok := c.ResponseWriter.(http.Flusher); ok {
			fl.Flush()
		}
		<-c.done // send nothing more until the client hangs up
		panic(http.ErrAbortHandler)
	}
	if c.limit >= 0 && c.n+int64(len(p)) > c.limit {
		p = p[:c.limit-c.n]
		k, _ := c.ResponseWriter.Write(p)
		c.add(int64(k))
		if fl, ok := c.ResponseWriter.(http.Flusher); ok {
			fl.Flush()
		}
		panic(http.ErrAbortHandler) // the server drops the connection
	}
	k, err := c.ResponseWriter.Write(p)
	c.add(int64(k))
	return k, err
}

func (c *countingWriter) add(n int64) {
	c.n += n
	c.h.mu.Lock()
	c.h.stat(c.key).Bytes += n
	c.h.mu.Unlock()
}
