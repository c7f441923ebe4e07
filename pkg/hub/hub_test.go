package hub

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helexa/helexa/pkg/hub/hubtest"
)

// testClient is a client against the fake hub with fast retries.
type testClient struct {
	*Client
	cache  string
	mu     sync.Mutex
	events []Event
}

func newTestClient(t *testing.T, h *hubtest.Hub, mods ...func(*Options)) *testClient {
	t.Helper()
	tc := &testClient{cache: t.TempDir()}
	opts := Options{CacheDir: tc.cache, Endpoint: h.URL, RetryBase: time.Millisecond, MaxRetries: 3,
		Progress: func(e Event) { tc.mu.Lock(); tc.events = append(tc.events, e); tc.mu.Unlock() }}
	for _, m := range mods {
		m(&opts)
	}
	tc.Client = New(opts)
	return tc
}

func (tc *testClient) kinds(file string) []EventKind {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	var out []EventKind
	for _, e := range tc.events {
		if e.File == file && (len(out) == 0 || out[len(out)-1] != e.Kind) {
			out = append(out, e.Kind)
		}
	}
	return out
}

func randBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	mustNoError(t, err)
	return b
}

// ggufRepo publishes a GGUF repo with the given quant files and returns
// their contents by name.
func ggufRepo(t *testing.T, h *hubtest.Hub, id string, names ...string) (string, map[string][]byte) {
	files := map[string][]byte{"README.md": []byte("# model card\n")}
	for i, n := range names {
		files[n] = randBytes(t, 3000+i*100)
	}
	return h.AddRepo(id, files), files
}

func TestPullLayoutIdenticalToHuggingFaceHub(t *testing.T) {
	h := hubtest.New(t)
	commit, files := ggufRepo(t, h, "org/m-GGUF", "m-Q4_K_M.gguf", "m-Q8_0.gguf")
	tc := newTestClient(t, h, func(o *Options) { o.Token = "secret" })

	res, err := tc.Resolve(context.Background(), "hf.co/org/m-GGUF:q8_0")
	mustNoError(t, err)
	checkEqual(t, "org/m-GGUF:Q8_0", res.Ref)
	checkEqual(t, commit, res.Commit)
	checkEqual(t, "Q8_0", res.Quant)
	checkEqual(t, []string{"m-Q8_0.gguf"}, res.Files)

	repoDir := filepath.Join(tc.cache, "models--org--m-GGUF")
	ref, err := os.ReadFile(filepath.Join(repoDir, "refs", "main"))
	mustNoError(t, err)
	checkEqual(t, commit, string(ref), "refs/main holds the bare commit, no newline")

	etag := hubtest.SHA256(files["m-Q8_0.gguf"])
	link := filepath.Join(repoDir, "snapshots", commit, "m-Q8_0.gguf")
	checkEqual(t, link, res.ModelPath)
	target, err := os.Readlink(link)
	mustNoError(t, err)
	checkEqual(t, "../../blobs/"+etag, target, "relative symlink like huggingface_hub")
	got, err := os.ReadFile(filepath.Join(repoDir, "blobs", etag))
	mustNoError(t, err)
	checkEqual(t, files["m-Q8_0.gguf"], got)
	_, err = os.Stat(filepath.Join(repoDir, "snapshots", commit, "m-Q4_K_M.gguf"))
	checkTrue(t, errors.Is(err, os.ErrNotExist), "other quants are not fetched")
	checkFalse(t, h.AuthReachedCDN(), "the token must not be sent to the CDN host")
	checkFileExists(t, filepath.Join(tc.cache, ".locks", "models--org--m-GGUF", etag+".lock"))
	checkEqual(t, []EventKind{EventStart, EventProgress, EventVerify, EventDone}, dedupProgress(tc.kinds("m-Q8_0.gguf")))
}

// dedupProgress drops progress events that a fast download may not emit.
func dedupProgress(k []EventKind) []EventKind {
	if len(k) > 1 && k[1] != EventProgress {
		return append([]EventKind{k[0], EventProgress}, k[1:]...)
	}
	return k
}

func TestNonLFSFileUsesGitBlobIDAsETag(t *testing.T) {
	h := hubtest.New(t)
	cfg := []byte(`{"architectures":["Qwen3ForCausalLM"]}`)
	commit := h.AddRepo("org/st", map[string][]byte{
		"config.json": cfg, "tokenizer.json": []byte("{}"), "model.safetensors": randBytes(t, 2048),
		"pytorch_model.bin": randBytes(t, 100), "original/consolidated.safetensors": randBytes(t, 10), "README.md": []byte("x"),
	})
	tc := newTestClient(t, h)
	res, err := tc.Resolve(context.Background(), "org/st")
	mustNoError(t, err)
	checkEqual(t, FormatSafetensors, res.Format)
	checkEqual(t, []string{"config.json", "model.safetensors", "tokenizer.json"}, res.Files)
	checkEqual(t, filepath.Join(tc.cache, "models--org--st", "snapshots", commit), res.ModelPath)
	target, err := os.Readlink(filepath.Join(res.ModelPath, "config.json"))
	mustNoError(t, err)
	checkEqual(t, "../../blobs/"+hubtest.GitSHA1(cfg), target)
	checkEqual(t, 0, h.Stats("org/st", "pytorch_model.bin").Gets, "other weight formats are skipped")
}

func TestReuseOfCachedSnapshotsAndBlobs(t *testing.T) {
	h := hubtest.New(t)
	_, files := ggufRepo(t, h, "org/m-GGUF", "m-Q4_K_M.gguf")
	tc := newTestClient(t, h)
	ctx := context.Background()
	_, err := tc.Resolve(ctx, "org/m-GGUF")
	mustNoError(t, err)
	mustEqual(t, 1, h.Stats("org/m-GGUF", "m-Q4_K_M.gguf").Gets)

	// Same snapshot again: nothing is downloaded, not even a HEAD.
	_, err = tc.Resolve(ctx, "org/m-GGUF")
	mustNoError(t, err)
	st := h.Stats("org/m-GGUF", "m-Q4_K_M.gguf")
	checkEqual(t, 1, st.Gets)
	checkEqual(t, 1, st.Heads)

	// A new revision holding the same bytes reuses the blob.
	files["README.md"] = []byte("changed")
	commit2 := h.AddRevision("org/m-GGUF", "v2", files)
	res, err := tc.Resolve(ctx, "org/m-GGUF@v2")
	mustNoError(t, err)
	checkEqual(t, commit2, res.Commit)
	checkEqual(t, 1, h.Stats("org/m-GGUF", "m-Q4_K_M.gguf").Gets, "blob reused across snapshots")
	ref, _ := os.ReadFile(filepath.Join(tc.cache, "models--org--m-GGUF", "refs", "v2"))
	checkEqual(t, commit2, string(ref))
}

func TestReusesBlobWrittenByPythonTools(t *testing.T) {
	h := hubtest.New(t)
	_, files := ggufRepo(t, h, "org/m-GGUF", "m-Q4_K_M.gguf")
	tc := newTestClient(t, h)
	data := files["m-Q4_K_M.gguf"]
	blobs := filepath.Join(tc.cache, "models--org--m-GGUF", "blobs")
	mustNoError(t, os.MkdirAll(blobs, 0o755))
	mustNoError(t, os.WriteFile(filepath.Join(blobs, hubtest.SHA256(data)), data, 0o644))
	res, err := tc.Resolve(context.Background(), "org/m-GGUF:Q4_K_M")
	mustNoError(t, err)
	checkEqual(t, 0, h.Stats("org/m-GGUF", "m-Q4_K_M.gguf").Gets)
	got, err := os.ReadFile(res.ModelPath)
	mustNoError(t, err)
	checkEqual(t, data, got)
}

func TestResumeAfterDroppedConnection(t *testing.T) {
	h := hubtest.New(t)
	_, files := ggufRepo(t, h, "org/m-GGUF", "m-Q8_0.gguf")
	h.DropAfter("org/m-GGUF", "m-Q8_0.gguf", 1000, 2)
	tc := newTestClient(t, h)
	res, err := tc.Resolve(context.Background(), "org/m-GGUF")
	mustNoError(t, err)
	got, _ := os.ReadFile(res.ModelPath)
	checkEqual(t, files["m-Q8_0.gguf"], got)
	checkEqual(t, []string{"", "bytes=1000-", "bytes=2000-"}, h.Stats("org/m-GGUF", "m-Q8_0.gguf").Ranges)
}

// failAfter lets the first n requests through and fails the rest, like a
// network that goes away.
type failAfter struct {
	mu sync.Mutex
	n  int
}

func (f *failAfter) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	f.n--
	ok := f.n >= 0
	f.mu.Unlock()
	if !ok {
		return nil, errors.New("network is down")
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestInterruptedPullLeavesResumablePartial(t *testing.T) {
	h := hubtest.New(t)
	_, files := ggufRepo(t, h, "org/m-GGUF", "m-Q8_0.gguf")
	data := files["m-Q8_0.gguf"]
	h.DropAfter("org/m-GGUF", "m-Q8_0.gguf", 1200, 1)
	// info, HEAD, GET (dropped at 1200 bytes), then the network is gone.
	down := &http.Client{Transport: &failAfter{n: 3}}
	tc := newTestClient(t, h, func(o *Options) { o.MaxRetries = 1; o.HTTPClient = down })
	_, err := tc.Resolve(context.Background(), "org/m-GGUF")
	mustError(t, err)
	checkContains(t, err.Error(), "network is down")
	blob := filepath.Join(tc.cache, "models--org--m-GGUF", "blobs", hubtest.SHA256(data))
	checkNoFileExists(t, blob) // never a half-written blob
	fi, err := os.Stat(blob + ".incomplete")
	mustNoError(t, err)
	checkEqual(t, int64(1200), fi.Size())

	tc = newTestClient(t, h, func(o *Options) { o.CacheDir = tc.cache })
	res, err := tc.Resolve(context.Background(), "org/m-GGUF")
	mustNoError(t, err)
	got, _ := os.ReadFile(res.ModelPath)
	checkEqual(t, data, got)
	r := h.Stats("org/m-GGUF", "m-Q8_0.gguf").Ranges
	checkEqual(t, "bytes=1200-", r[len(r)-1])
	checkNoFileExists(t, blob+".incomplete")
}

func TestContextCancelKeepsPartial(t *testing.T) {
	h := hubtest.New(t)
	_, files := ggufRepo(t, h, "org/m-GGUF", "m-Q8_0.gguf")
	h.DropAfter("org/m-GGUF", "m-Q8_0.gguf", 1500, 100)
	ctx, cancel := context.WithCancel(context.Background())
	tc := newTestClient(t, h, func(o *Options) { o.RetryBase = time.Hour })
	blob := filepath.Join(tc.cache, "models--org--m-GGUF", "blobs", hubtest.SHA256(files["m-Q8_0.gguf"]))
	go func() {
		// Cancel once the client has the 1500 bytes on disk and waits to retry
		// (what the server sent may still be in flight).
		for fileSize(blob+".incomplete") < 1500 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := tc.Resolve(ctx, "org/m-GGUF")
	mustErrorIs(t, err, context.Canceled)
	checkContains(t, err.Error(), "resumes next time")
	fi, err := os.Stat(blob + ".incomplete")
	mustNoError(t, err)
	checkEqual(t, int64(1500), fi.Size())
}

func TestParallelRangesWithDropAndKilledProcess(t *testing.T) {
	h := hubtest.New(t)
	data := randBytes(t, 200_000)
	commit := h.AddRepo("org/big-GGUF", map[string][]byte{"big-Q4_0.gguf": data})
	_ = commit
	tc := newTestClient(t, h, func(o *Options) { o.ParallelThreshold = 64 << 10; o.Connections = 4 })

	// A killed parallel download: state file says 16384 bytes are valid,
	// the rest of the partial file is garbage.
	blob := filepath.Join(tc.cache, "models--org--big-GGUF", "blobs", hubtest.SHA256(data))
	mustNoError(t, os.MkdirAll(filepath.Dir(blob), 0o755))
	partial := append(bytes.Clone(data[:16384]), randBytes(t, 50_000)...)
	mustNoError(t, os.WriteFile(blob+".incomplete", partial, 0o644))
	mustNoError(t, os.WriteFile(blob+".incomplete.json", []byte(`{"size":200000,"prefix":16384}`), 0o644))
	h.DropAfter("org/big-GGUF", "big-Q4_0.gguf", 3000, 1)

	res, err := tc.Resolve(context.Background(), "org/big-GGUF")
	mustNoError(t, err)
	got, _ := os.ReadFile(res.ModelPath)
	checkEqual(t, data, got)
	ranges := h.Stats("org/big-GGUF", "big-Q4_0.gguf").Ranges
	checkTrue(t, len(ranges) > 4, "several ranges: ", ranges)
	checkTrue(t, slices.ContainsFunc(ranges, func(r string) bool { return strings.HasPrefix(r, "bytes=16384-") }), "resumes at the recorded prefix: ", ranges)
	for _, r := range ranges {
		checkTrue(t, strings.HasPrefix(r, "bytes="), r)
	}
	checkNoFileExists(t, blob+".incomplete.json")
}

func TestServerWithoutRangeSupportRestarts(t *testing.T) {
	for _, threshold := range []int64{0, 1024} { // sequential, then parallel ranges first
		h := hubtest.New(t)
		_, files := ggufRepo(t, h, "org/m-GGUF", "m-Q8_0.gguf")
		h.DisableRanges()
		h.DropAfter("org/m-GGUF", "m-Q8_0.gguf", 1000, 1)
		tc := newTestClient(t, h, func(o *Options) { o.ParallelThreshold = threshold })
		res, err := tc.Resolve(context.Background(), "org/m-GGUF")
		mustNoError(t, err, "threshold ", threshold)
		got, _ := os.ReadFile(res.ModelPath)
		checkEqual(t, files["m-Q8_0.gguf"], got)
		blob := filepath.Join(tc.cache, "models--org--m-GGUF", "blobs", hubtest.SHA256(files["m-Q8_0.gguf"]))
		checkFileExists(t, blob)
		checkNoFileExists(t, blob+".incomplete.parallel")
		checkNoFileExists(t, blob+".incomplete.json")
	}
}

func TestChecksumMismatchDeletesPartial(t *testing.T) {
	h := hubtest.New(t)
	_, files := ggufRepo(t, h, "org/m-GGUF", "m-Q8_0.gguf")
	h.Corrupt("org/m-GGUF", "m-Q8_0.gguf")
	tc := newTestClient(t, h)
	_, err := tc.Resolve(context.Background(), "org/m-GGUF")
	mustErrorIs(t, err, ErrChecksum)
	checkContains(t, err.Error(), "m-Q8_0.gguf")
	checkContains(t, err.Error(), "deleted")
	blob := filepath.Join(tc.cache, "models--org--m-GGUF", "blobs", hubtest.SHA256(files["m-Q8_0.gguf"]))
	checkNoFileExists(t, blob)
	checkNoFileExists(t, blob+".incomplete")
	checkNoDirExists(t, filepath.Join(tc.cache, "models--org--m-GGUF", "snapshots"))
}

func TestGatedRepo(t *testing.T) {
	h := hubtest.New(t)
	ggufRepo(t, h, "org/gated-GGUF", "g-Q4_K_M.gguf")
	h.Gate("org/gated-GGUF", "good")
	for _, tt := range []struct {
		token string
		want  string
	}{{"", "HTTP 401"}, {"bad", "HTTP 403"}} {
		tc := newTestClient(t, h, func(o *Options) { o.Token = tt.token })
		_, err := tc.Resolve(context.Background(), "org/gated-GGUF")
		mustErrorIs(t, err, ErrUnauthorized)
		checkContains(t, err.Error(), tt.want)
		checkContains(t, err.Error(), "HF_TOKEN")
		checkContains(t, err.Error(), "licence")
	}
	tc := newTestClient(t, h, func(o *Options) { o.Token = "good" })
	_, err := tc.Resolve(context.Background(), "org/gated-GGUF")
	mustNoError(t, err)
	checkFalse(t, h.AuthReachedCDN())
}

func TestNotFound(t *testing.T) {
	h := hubtest.New(t)
	ggufRepo(t, h, "org/m-GGUF", "m-Q4_K_M.gguf")
	tc := newTestClient(t, h)
	for _, tt := range []struct{ ref, want string }{
		{"org/nope", "repository not found"},
		{"org/m-GGUF@v9", "revision not found"},
	} {
		_, err := tc.Resolve(context.Background(), tt.ref)
		mustErrorIs(t, err, ErrNotFound, tt.ref)
		checkContains(t, err.Error(), tt.want)
	}
	// A file the repo lists but the Hub cannot serve: the error names it.
	h.FailWith("org/m-GGUF", "m-Q4_K_M.gguf", 404, 1)
	_, err := tc.Resolve(context.Background(), "org/m-GGUF")
	mustErrorIs(t, err, ErrNotFound)
	checkContains(t, err.Error(), "org/m-GGUF/m-Q4_K_M.gguf: HTTP 404")
}

func TestRetriesOn429And5xx(t *testing.T) {
	h := hubtest.New(t)
	_, files := ggufRepo(t, h, "org/m-GGUF", "m-Q8_0.gguf")
	h.FailWith("org/m-GGUF", "", 429, 2)
	h.FailWith("org/m-GGUF", "m-Q8_0.gguf", 503, 2)
	tc := newTestClient(t, h)
	res, err := tc.Resolve(context.Background(), "org/m-GGUF")
	mustNoError(t, err)
	got, _ := os.ReadFile(res.ModelPath)
	checkEqual(t, files["m-Q8_0.gguf"], got)

	h.FailWith("org/m-GGUF", "", 500, 10)
	_, err = newTestClient(t, h).Resolve(context.Background(), "org/m-GGUF")
	mustError(t, err)
	checkContains(t, err.Error(), "HTTP 500")
}

func TestOfflineMode(t *testing.T) {
	h := hubtest.New(t)
	commit, _ := ggufRepo(t, h, "org/m-GGUF", "m-Q4_K_M.gguf", "m-Q8_0.gguf")
	online := newTestClient(t, h)
	_, err := online.Resolve(context.Background(), "org/m-GGUF:Q8_0")
	mustNoError(t, err)
	heads := h.Stats("org/m-GGUF", "m-Q8_0.gguf").Heads

	offline := New(Options{CacheDir: online.cache, Endpoint: "http://127.0.0.1:1", Offline: true})
	res, err := offline.Resolve(context.Background(), "org/m-GGUF:q8_0")
	mustNoError(t, err)
	checkEqual(t, commit, res.Commit)
	checkEqual(t, heads, h.Stats("org/m-GGUF", "m-Q8_0.gguf").Heads)

	_, err = offline.Resolve(context.Background(), "org/m-GGUF:Q5_K_M")
	mustErrorIs(t, err, ErrNotCached)
	checkContains(t, err.Error(), "HF_HUB_OFFLINE=1 keeps helexa off the network")
	checkContains(t, err.Error(), "no Q5_K_M in the cache, only Q8_0")
	checkContains(t, err.Error(), "helexa pull org/m-GGUF:Q5_K_M")
	_, err = offline.Resolve(context.Background(), "org/other")
	mustErrorIs(t, err, ErrNotCached)
	checkContains(t, err.Error(), "org/other@main")
	checkContains(t, err.Error(), "helexa pull org/other")

	// Snapshot present but its blob deleted: the error names the file.
	blob, err := filepath.EvalSymlinks(res.ModelPath)
	mustNoError(t, err)
	mustNoError(t, os.Remove(blob))
	_, err = offline.Resolve(context.Background(), "org/m-GGUF:Q8_0")
	mustErrorIs(t, err, ErrNotCached)
	checkContains(t, err.Error(), "missing m-Q8_0.gguf")
	mustNoError(t, os.Remove(res.ModelPath))
	_, err = offline.Resolve(context.Background(), "org/m-GGUF:Q8_0")
	mustErrorIs(t, err, ErrNotCached)
	checkContains(t, err.Error(), "helexa pull org/m-GGUF:Q8_0")

	// Online but the Hub is unreachable: the cache answers.
	_, err = online.Resolve(context.Background(), "org/m-GGUF:Q8_0")
	mustNoError(t, err)
	down := New(Options{CacheDir: online.cache, Endpoint: "http://127.0.0.1:1", MaxRetries: 1, RetryBase: time.Millisecond})
	_, err = down.Resolve(context.Background(), "org/m-GGUF:Q8_0")
	mustNoError(t, err)
}

func TestSplitGGUFFetchedWhole(t *testing.T) {
	h := hubtest.New(t)
	files := map[string][]byte{}
	for _, n := range []string{"Q4_K_M/m-Q4_K_M-00001-of-00003.gguf", "Q4_K_M/m-Q4_K_M-00002-of-00003.gguf",
		"Q4_K_M/m-Q4_K_M-00003-of-00003.gguf", "m-Q8_0.gguf"} {
		files[n] = randBytes(t, 1000)
	}
	commit := h.AddRepo("org/split-GGUF", files)
	tc := newTestClient(t, h)
	res, err := tc.Resolve(context.Background(), "org/split-GGUF")
	mustNoError(t, err)
	checkEqual(t, "Q4_K_M", res.Quant)
	checkEqual(t, 3, len(res.Files))
	checkTrue(t, strings.HasSuffix(res.ModelPath, "-00001-of-00003.gguf"))
	for _, f := range res.Files {
		p := filepath.Join(tc.cache, "models--org--split-GGUF", "snapshots", commit, f)
		target, err := os.Readlink(p)
		mustNoError(t, err)
		checkEqual(t, "../../../blobs/"+hubtest.SHA256(files[f]), target)
		got, _ := os.ReadFile(p)
		checkEqual(t, files[f], got)
	}
}

func TestPathTraversalRejected(t *testing.T) {
	h := hubtest.New(t)
	h.AddRepo("org/evil", map[string][]byte{"../../evil.gguf": []byte("x"), "ok.gguf": []byte("y")})
	tc := newTestClient(t, h)
	_, err := tc.Resolve(context.Background(), "org/evil")
	mustErrorIs(t, err, ErrUnsafePath)
	for _, p := range []string{"", "/etc/passwd", `a\b.gguf`, "a/../b", "./a", "a//b", "..", "x/.."} {
		checkErrorIs(t, checkRelPath(p), ErrUnsafePath, p)
	}
	for _, p := range []string{"a.gguf", "dir/a.gguf", "a..b.gguf"} {
		checkNoError(t, checkRelPath(p), p)
	}
}

func TestConcurrentPullsDownloadOnce(t *testing.T) {
	h := hubtest.New(t)
	_, files := ggufRepo(t, h, "org/m-GGUF", "m-Q8_0.gguf")
	h.Throttle("org/m-GGUF", "m-Q8_0.gguf", 10_000) // ~0.3s, so the two pulls overlap
	a := newTestClient(t, h)
	b := New(Options{CacheDir: a.cache, Endpoint: h.URL})
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, c := range []*Client{a.Client, b} {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = c.Resolve(context.Background(), "org/m-GGUF") }()
	}
	wg.Wait()
	mustNoError(t, errs[0])
	mustNoError(t, errs[1])
	checkEqual(t, 1, h.Stats("org/m-GGUF", "m-Q8_0.gguf").Gets)
	got, _ := os.ReadFile(filepath.Join(a.cache, "models--org--m-GGUF", "blobs", hubtest.SHA256(files["m-Q8_0.gguf"])))
	checkEqual(t, files["m-Q8_0.gguf"], got)
}

func TestQuantErrorsFromHub(t *testing.T) {
	h := hubtest.New(t)
	ggufRepo(t, h, "org/m-GGUF", "m-Q4_K_M.gguf", "m-Q8_0.gguf", "mmproj-m-F16.gguf")
	tc := newTestClient(t, h)
	_, err := tc.Resolve(context.Background(), "org/m-GGUF:Q5_K_M")
	var qe *QuantError
	mustErrorAs(t, err, &qe)
	checkEqual(t, []string{"Q4_K_M", "Q8_0"}, qe.Available)
	checkContains(t, err.Error(), "available quants: Q4_K_M, Q8_0")
}

func TestHTTPErrorMessages(t *testing.T) {
	tests := []struct {
		status    int
		code      string
		is        error
		want      string
		retryable bool
	}{
		{401, "RepoNotFound", ErrNotFound, "repository not found", false},
		{401, "GatedRepo", ErrUnauthorized, "accept its licence", false},
		{401, "", ErrUnauthorized, "set HF_TOKEN", false},
		{403, "", ErrUnauthorized, "gated or private", false},
		{404, "EntryNotFound", ErrNotFound, "file not found", false},
		{404, "RevisionNotFound", ErrNotFound, "revision not found", false},
		{429, "", nil, "rate limited", true},
		{502, "", nil, "try again later", true},
	}
	for _, tt := range tests {
		e := &HTTPError{Status: tt.status, Code: tt.code, What: "repo x/y"}
		if tt.is != nil {
			checkErrorIs(t, e, tt.is, tt.status, tt.code)
		}
		checkContains(t, e.Error(), tt.want)
		checkEqual(t, tt.retryable, retryable(e), tt.status)
	}
}
