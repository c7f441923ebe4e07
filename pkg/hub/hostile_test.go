package hub

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/helexa/helexa/pkg/hub/hubtest"
)

// largestFile is the size of the biggest regular file under dir.
func largestFile(t *testing.T, dir string) int64 {
	t.Helper()
	var most int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			most = max(most, fi.Size())
		}
		return err
	})
	mustNoError(t, err)
	return most
}

// TestPullNeverWritesPastDeclaredSize: a server that keeps sending after
// the file's declared size gets nothing past it written, and the pull
// fails with ErrOversize.
func TestPullNeverWritesPastDeclaredSize(t *testing.T) {
	for _, file := range []string{"model.safetensors", "config.json"} { // LFS (X-Linked-Size), git (Content-Length of the HEAD)
		t.Run(file, func(t *testing.T) {
			h := hubtest.New(t)
			data := randBytes(t, 100_000)
			h.AddRepo("org/m", map[string][]byte{"model.safetensors": data, "config.json": data})
			h.Oversize("org/m", file, 8<<20)
			tc := newTestClient(t, h)
			_, err := tc.Resolve(context.Background(), "org/m")
			mustErrorIs(t, err, ErrOversize)
			checkTrue(t, strings.Contains(err.Error(), file), err.Error())
			checkTrue(t, largestFile(t, tc.cache) <= int64(len(data)), "wrote ", largestFile(t, tc.cache), " bytes for a ", len(data), "-byte file")
		})
	}
}

// TestPullStall: a server that stops sending is dropped after ReadTimeout
// and the download resumes where it stopped; one that stalls every time
// fails with ErrStalled naming the file, in bounded time.
func TestPullStall(t *testing.T) {
	const file = "m-Q8_0.gguf"
	h := hubtest.New(t)
	data := randBytes(t, 200_000)
	h.AddRepo("org/m-GGUF", map[string][]byte{file: data})
	h.StallAfter("org/m-GGUF", file, 1024, 2)
	fast := func(o *Options) { o.ReadTimeout = 200 * time.Millisecond }
	tc := newTestClient(t, h, fast)
	res, err := tc.Resolve(context.Background(), "org/m-GGUF")
	mustNoError(t, err)
	got, _ := os.ReadFile(res.ModelPath)
	checkTrue(t, bytes.Equal(got, data), "file intact after two stalls")
	st := h.Stats("org/m-GGUF", file)
	checkEqual(t, []string{"", "bytes=1024-", "bytes=2048-"}, st.Ranges, "each retry resumes")

	h2 := hubtest.New(t)
	h2.AddRepo("org/m-GGUF", map[string][]byte{file: data})
	h2.StallAfter("org/m-GGUF", file, 1024, -1)
	tc2 := newTestClient(t, h2, fast)
	start := time.Now()
	_, err = tc2.Resolve(context.Background(), "org/m-GGUF")
	mustErrorIs(t, err, ErrStalled)
	checkTrue(t, strings.Contains(err.Error(), "org/m-GGUF/"+file), err.Error())
	checkTrue(t, time.Since(start) < 20*time.Second, "gave up after ", time.Since(start))
}

// TestBlobNamedByVerifiedHash: a wrong X-Linked-Etag with the right
// lfs.sha256 stores the blob under the sha256 it was verified against.
func TestBlobNamedByVerifiedHash(t *testing.T) {
	const file = "m-Q8_0.gguf"
	h := hubtest.New(t)
	data := randBytes(t, 50_000)
	h.AddRepo("org/m-GGUF", map[string][]byte{file: data})
	wrong := hubtest.SHA256([]byte("something else"))
	h.LinkedETag("org/m-GGUF", file, wrong)
	tc := newTestClient(t, h)
	res, err := tc.Resolve(context.Background(), "org/m-GGUF")
	mustNoError(t, err)
	blobs := filepath.Join(tc.cache, "models--org--m-GGUF", "blobs")
	_, err = os.Stat(filepath.Join(blobs, hubtest.SHA256(data)))
	checkNoError(t, err, "the blob is named by its content hash")
	_, err = os.Stat(filepath.Join(blobs, wrong))
	checkTrue(t, os.IsNotExist(err), "no blob under the wrong ETag")
	target, err := filepath.EvalSymlinks(res.ModelPath)
	mustNoError(t, err)
	checkEqual(t, hubtest.SHA256(data), filepath.Base(target))
}

func TestBlobName(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		etag, lfs, want string
		ok              bool
	}{
		{"whatever", sha, sha, true},
		{sha, "", sha, true},
		{strings.Repeat("c", 40), "", strings.Repeat("c", 40), true},
		{"not-a-hash", "", "", false},
		{sha, "../../evil", "", false},
	} {
		got, err := blobName(&fileMeta{ETag: tc.etag}, tc.lfs, "org/m/f")
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("blobName(%q, %q) = %q, %v", tc.etag, tc.lfs, got, err)
		}
	}
}

// TestLocalDirSharingAQuant: a directory of GGUFs of one quant is a bad
// reference (a 4xx through the daemon) that says how to pick one.
func TestLocalDirSharingAQuant(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a-Q4_K_M.gguf", "b-Q4_K_M.gguf"} {
		mustNoError(t, os.WriteFile(filepath.Join(dir, f), []byte("GGUF"), 0o644))
	}
	_, err := New(Options{CacheDir: t.TempDir()}).Resolve(context.Background(), dir)
	mustErrorIs(t, err, ErrBadReference)
	checkTrue(t, strings.Contains(err.Error(), filepath.Join(dir, "a-Q4_K_M.gguf")), err.Error())
}

// TestSnapshotSideFileLinkRefused: a safetensors snapshot whose
// config.json links out of the cache is not handed to a loader: a link to
// a device counts as a missing file, one to a regular file elsewhere is a
// bad reference.
func TestSnapshotSideFileLinkRefused(t *testing.T) {
	h := hubtest.New(t)
	h.AddRepo("org/m", map[string][]byte{"model.safetensors": randBytes(t, 1000), "config.json": []byte(`{}`)})
	cache := t.TempDir()
	c := newTestClient(t, h, func(o *Options) { o.CacheDir = cache })
	res, err := c.Resolve(context.Background(), "org/m")
	mustNoError(t, err)
	cfg := filepath.Join(res.ModelPath, "config.json")
	mustNoError(t, os.Remove(cfg))
	mustNoError(t, os.Symlink("/dev/zero", cfg))
	off := newTestClient(t, h, func(o *Options) { o.CacheDir = cache; o.Offline = true })
	_, err = off.Resolve(context.Background(), "org/m")
	mustErrorIs(t, err, ErrNotCached)
	checkTrue(t, strings.Contains(err.Error(), "config.json"), err.Error())
	outside := filepath.Join(t.TempDir(), "config.json")
	mustNoError(t, os.WriteFile(outside, []byte(`{}`), 0o644))
	mustNoError(t, os.Remove(cfg))
	mustNoError(t, os.Symlink(outside, cfg))
	_, err = off.Resolve(context.Background(), "org/m")
	mustErrorIs(t, err, ErrBadReference)
	checkTrue(t, strings.Contains(err.Error(), "outside the cache"), err.Error())
}
