//go:build unix

package hub

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/helexa/helexa/pkg/hub/hubtest"
)

// TestPullNeverWritesThroughLinks: partial-download names that are
// symbolic links (or FIFOs) are refused, and the files they point at are
// left untouched, whichever download path would have written them.
func TestPullNeverWritesThroughLinks(t *testing.T) {
	for _, tc := range []struct {
		name      string
		suffix    string
		threshold int64
		fifo      bool
	}{
		{"symlinked .incomplete, sequential", ".incomplete", 1 << 30, false},
		{"symlinked .incomplete, parallel", ".incomplete", 1 << 10, false},
		{"symlinked .incomplete.parallel", ".incomplete.parallel", 1 << 10, false},
		{"symlinked state file", ".incomplete.json", 1 << 10, false},
		{"FIFO .incomplete", ".incomplete", 1 << 30, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := hubtest.New(t)
			data := randBytes(t, 50_000)
			h.AddRepo("org/m-GGUF", map[string][]byte{"m-Q4_0.gguf": data})
			cache := t.TempDir()
			blobs := filepath.Join(cache, "models--org--m-GGUF", "blobs")
			mustNoError(t, os.MkdirAll(blobs, 0o755))
			part := filepath.Join(blobs, hubtest.SHA256(data)+tc.suffix)
			victim := filepath.Join(t.TempDir(), "victim")
			original := []byte("precious system file\n")
			mustNoError(t, os.WriteFile(victim, original, 0o644))
			if tc.fifo {
				mustNoError(t, syscall.Mkfifo(part, 0o644))
			} else {
				mustNoError(t, os.Symlink(victim, part))
			}
			c := newTestClient(t, h, func(o *Options) { o.CacheDir = cache; o.ParallelThreshold = tc.threshold; o.Connections = 4 })
			_, err := c.Resolve(context.Background(), "org/m-GGUF")
			mustErrorIs(t, err, ErrNotRegular)
			got, _ := os.ReadFile(victim)
			checkTrue(t, bytes.Equal(got, original), "the link's target is unchanged: ", string(got))
		})
	}
}

// TestSnapshotLinkOutOfCacheRefused: a snapshot entry that links outside
// the cache is not handed to a loader.
func TestSnapshotLinkOutOfCacheRefused(t *testing.T) {
	h := hubtest.New(t)
	data := randBytes(t, 10_000)
	h.AddRepo("org/m-GGUF", map[string][]byte{"m-Q4_0.gguf": data})
	cache := t.TempDir()
	c := newTestClient(t, h, func(o *Options) { o.CacheDir = cache })
	res, err := c.Resolve(context.Background(), "org/m-GGUF")
	mustNoError(t, err)
	outside := filepath.Join(t.TempDir(), "elsewhere.gguf")
	mustNoError(t, os.WriteFile(outside, data, 0o644))
	mustNoError(t, os.Remove(res.ModelPath))
	mustNoError(t, os.Symlink(outside, res.ModelPath))
	off := newTestClient(t, h, func(o *Options) { o.CacheDir = cache; o.Offline = true })
	_, err = off.Resolve(context.Background(), "org/m-GGUF")
	mustErrorIs(t, err, ErrBadReference)
}

// TestCacheWithoutRefsMain: a repository that huggingface_hub cached with
// hf_hub_download at a commit (a snapshot, no refs/main) resolves offline
// to that snapshot; two snapshots are an error naming both.
func TestCacheWithoutRefsMain(t *testing.T) {
	h := hubtest.New(t)
	data := randBytes(t, 10_000)
	h.AddRepo("org/m-GGUF", map[string][]byte{"m-Q4_0.gguf": data})
	cache := t.TempDir()
	c := newTestClient(t, h, func(o *Options) { o.CacheDir = cache })
	res, err := c.Resolve(context.Background(), "org/m-GGUF")
	mustNoError(t, err)
	mustNoError(t, os.Remove(filepath.Join(cache, "models--org--m-GGUF", "refs", "main")))
	off := newTestClient(t, h, func(o *Options) { o.CacheDir = cache; o.Offline = true })
	got, err := off.Resolve(context.Background(), "org/m-GGUF")
	mustNoError(t, err)
	checkTrue(t, got.ModelPath == res.ModelPath, got.ModelPath)
	other := filepath.Join(cache, "models--org--m-GGUF", "snapshots", strings.Repeat("b", 40))
	mustNoError(t, os.MkdirAll(other, 0o755))
	_, err = off.Resolve(context.Background(), "org/m-GGUF")
	mustErrorIs(t, err, ErrNotCached)
	checkTrue(t, strings.Contains(err.Error(), "@<commit>"), err.Error())
}
