package hub

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/helexa/helexa/pkg/hub/hubtest"
)

// TestReusesHuggingFaceHubCache lays out what Python's huggingface_hub
// leaves in a cache (byte for byte its naming) and checks helexa reuses it.
func TestReusesHuggingFaceHubCache(t *testing.T) {
	tests := []struct {
		name string
		// setup writes the Python-side files into repoDir.
		setup      func(t *testing.T, repoDir, cache, commit, etag string, data []byte)
		wantGets   int
		wantRanges []string
		offlineOK  bool // the cache alone answers
	}{
		{
			name: "partial blobs/<etag>.incomplete and its lock file",
			setup: func(t *testing.T, repoDir, cache, commit, etag string, data []byte) {
				writeFile(t, filepath.Join(repoDir, "blobs", etag+".incomplete"), data[:1234])
				writeFile(t, filepath.Join(cache, ".locks", "models--org--m-GGUF", etag+".lock"), nil)
			},
			wantGets: 1, wantRanges: []string{"bytes=1234-"},
		},
		{
			name: "snapshot symlinks, blobs and refs/main",
			setup: func(t *testing.T, repoDir, cache, commit, etag string, data []byte) {
				writeFile(t, filepath.Join(repoDir, "blobs", etag), data)
				snap := filepath.Join(repoDir, "snapshots", commit)
				mustNoError(t, os.MkdirAll(snap, 0o755))
				mustNoError(t, os.Symlink("../../blobs/"+etag, filepath.Join(snap, "m-Q8_0.gguf")))
				writeFile(t, filepath.Join(repoDir, "refs", "main"), []byte(commit))
				mustNoError(t, os.MkdirAll(filepath.Join(repoDir, ".no_exist", commit), 0o755))
			},
			offlineOK: true,
		},
		{
			name: "snapshot of plain copies (no symlink support)",
			setup: func(t *testing.T, repoDir, cache, commit, etag string, data []byte) {
				writeFile(t, filepath.Join(repoDir, "snapshots", commit, "m-Q8_0.gguf"), data)
				writeFile(t, filepath.Join(repoDir, "refs", "main"), []byte(commit+"\n"))
			},
			offlineOK: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hubtest.New(t)
			commit, files := ggufRepo(t, h, "org/m-GGUF", "m-Q8_0.gguf")
			data := files["m-Q8_0.gguf"]
			tc := newTestClient(t, h)
			repoDir := filepath.Join(tc.cache, "models--org--m-GGUF")
			tt.setup(t, repoDir, tc.cache, commit, hubtest.SHA256(data), data)

			offline := New(Options{CacheDir: tc.cache, Offline: true})
			res, err := offline.Resolve(context.Background(), "org/m-GGUF:Q8_0")
			if tt.offlineOK {
				mustNoError(t, err, "offline")
				checkEqual(t, commit, res.Commit)
			} else {
				checkErrorIs(t, err, ErrNotCached)
			}

			res, err = tc.Resolve(context.Background(), "org/m-GGUF:Q8_0")
			mustNoError(t, err)
			got, err := os.ReadFile(res.ModelPath)
			mustNoError(t, err)
			checkTrue(t, bytes.Equal(data, got), "the model file is intact")
			st := h.Stats("org/m-GGUF", "m-Q8_0.gguf")
			checkEqual(t, tt.wantGets, st.Gets)
			if tt.wantRanges != nil {
				checkEqual(t, tt.wantRanges, st.Ranges)
			}
			list, err := tc.List(context.Background())
			mustNoError(t, err)
			mustEqual(t, 1, len(list))
			checkEqual(t, int64(len(data)), list[0].Size)
		})
	}
}

func writeFile(t *testing.T, p string, data []byte) {
	t.Helper()
	mustNoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	mustNoError(t, os.WriteFile(p, data, 0o644))
}

// TestCacheWithoutSymlinks: where links cannot be made, a freshly
// downloaded blob moves into the snapshot (one copy on disk, as
// huggingface_hub does) and an existing blob is copied; list and rm work.
func TestCacheWithoutSymlinks(t *testing.T) {
	h := hubtest.New(t)
	same := randBytes(t, 2000)
	commit := h.AddRepo("org/m-GGUF", map[string][]byte{"m-Q8_0.gguf": same, "m-Q4_0.gguf": randBytes(t, 1000)})
	tc := newTestClient(t, h)
	tc.symlink = func(string, string) error { return errors.New("operation not permitted") }
	ctx := context.Background()
	repoDir := filepath.Join(tc.cache, "models--org--m-GGUF")
	blob := filepath.Join(repoDir, "blobs", hubtest.SHA256(same))

	res, err := tc.Resolve(ctx, "org/m-GGUF:Q8_0")
	mustNoError(t, err)
	fi, err := os.Lstat(res.ModelPath)
	mustNoError(t, err)
	checkTrue(t, fi.Mode().IsRegular(), "a plain file in the snapshot")
	got, _ := os.ReadFile(res.ModelPath)
	checkTrue(t, bytes.Equal(same, got), "content")
	checkNoFileExists(t, blob) // moved, not duplicated

	// A blob already in blobs/ (e.g. from a machine with links) is copied.
	writeFile(t, blob, same)
	commit2 := h.AddRevision("org/m-GGUF", "v2", map[string][]byte{"m-Q8_0.gguf": same})
	gets := h.Stats("org/m-GGUF", "m-Q8_0.gguf").Gets
	res, err = tc.Resolve(ctx, "org/m-GGUF:Q8_0@v2")
	mustNoError(t, err)
	checkEqual(t, gets, h.Stats("org/m-GGUF", "m-Q8_0.gguf").Gets, "existing blob reused")
	checkEqual(t, filepath.Join(repoDir, "snapshots", commit2, "m-Q8_0.gguf"), res.ModelPath)
	got, _ = os.ReadFile(res.ModelPath)
	checkTrue(t, bytes.Equal(same, got), "copied content")
	checkFileExists(t, blob)

	list, err := tc.List(ctx)
	mustNoError(t, err)
	checkEqual(t, 2, len(list))
	mustNoError(t, tc.Remove(ctx, "org/m-GGUF"))
	checkNoDirExists(t, filepath.Join(repoDir, "snapshots", commit))
	mustNoError(t, tc.Remove(ctx, "org/m-GGUF@v2"))
	checkNoDirExists(t, repoDir)
}

// TestCacheFallbackWhenTheHubFails: a model already in the cache is used
// when the Hub cannot answer (down, rate-limiting, refusing the token, no
// network), with a notice; a 404 is reported, not hidden.
func TestCacheFallbackWhenTheHubFails(t *testing.T) {
	tests := []struct {
		name     string
		breakHub func(h *hubtest.Hub, o *Options)
		fallback bool
		want     string // in the notice or the error
	}{
		{name: "hub down", breakHub: func(h *hubtest.Hub, _ *Options) { h.FailWith("org/m-GGUF", "", 503, 100) }, fallback: true, want: "HTTP 503"},
		{name: "rate limited", breakHub: func(h *hubtest.Hub, _ *Options) { h.FailWith("org/m-GGUF", "", 429, 100) }, fallback: true, want: "HTTP 429"},
		{name: "token refused", breakHub: func(h *hubtest.Hub, _ *Options) { h.Gate("org/m-GGUF", "new-token") }, fallback: true, want: "HTTP 401"},
		{name: "no network", breakHub: func(_ *hubtest.Hub, o *Options) { o.Endpoint = "http://127.0.0.1:1" }, fallback: true, want: "cannot reach 127.0.0.1:1 (connection refused)"},
		{name: "repo gone", breakHub: func(h *hubtest.Hub, _ *Options) { h.FailWith("org/m-GGUF", "", 404, 100) }, want: "HTTP 404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hubtest.New(t)
			commit, _ := ggufRepo(t, h, "org/m-GGUF", "m-Q8_0.gguf")
			first := newTestClient(t, h)
			_, err := first.Resolve(context.Background(), "org/m-GGUF")
			mustNoError(t, err)
			tc := newTestClient(t, h, func(o *Options) {
				o.CacheDir, o.MaxRetries = first.cache, 1
				tt.breakHub(h, o)
			})
			res, err := tc.Resolve(context.Background(), "org/m-GGUF")
			if !tt.fallback {
				mustError(t, err)
				checkContains(t, err.Error(), tt.want)
				return
			}
			mustNoError(t, err)
			checkEqual(t, commit, res.Commit)
			var notice string
			for _, e := range tc.events {
				if e.Kind == EventNotice {
					notice += e.Message
				}
			}
			checkContains(t, notice, tt.want)
			checkContains(t, notice, "using the cached snapshot")
		})
	}
}
