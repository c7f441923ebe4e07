package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/helexa/helexa/pkg/hub/hubtest"
)

// The tests in this file run real pulls in child processes (this test
// binary re-executed into TestHelperProcessPull), to kill one mid-download
// or to run two at once on one cache.

const helperEnv = "HUB_TEST_HELPER" // not HELEXA_*: a test-only switch, not a setting

// TestHelperProcessPull is not a test: it is the child process. It pulls
// $HELPER_REF into $HELPER_CACHE from $HELPER_ENDPOINT and prints the model
// path.
func TestHelperProcessPull(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("helper process for the multi-process tests")
	}
	threshold, _ := strconv.ParseInt(os.Getenv("HELPER_PARALLEL_THRESHOLD"), 10, 64)
	c := New(Options{CacheDir: os.Getenv("HELPER_CACHE"), Endpoint: os.Getenv("HELPER_ENDPOINT"),
		ParallelThreshold: threshold, Connections: 4, RetryBase: time.Millisecond})
	res, err := c.Resolve(context.Background(), os.Getenv("HELPER_REF"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	fmt.Println(res.ModelPath)
	os.Exit(0)
}

func helperCmd(t *testing.T, h *hubtest.Hub, cache, ref string, threshold int64) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcessPull$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"=1", "HELPER_CACHE="+cache, "HELPER_ENDPOINT="+h.URL,
		"HELPER_REF="+ref, "HELPER_PARALLEL_THRESHOLD="+strconv.FormatInt(threshold, 10))
	return cmd
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestKilledProcessLeavesResumablePartial(t *testing.T) {
	tests := []struct {
		name      string
		threshold int64  // parallel ranges from this size
		leaves    string // what the killed process leaves next to the blob's name
	}{
		{name: "sequential", threshold: 1 << 30, leaves: ".incomplete"},
		{name: "parallel ranges", threshold: 64 << 10, leaves: ".incomplete.parallel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hubtest.New(t)
			data := randBytes(t, 600_000)
			h.AddRepo("org/big-GGUF", map[string][]byte{"big-Q4_0.gguf": data})
			h.Throttle("org/big-GGUF", "big-Q4_0.gguf", 300_000)
			cache := t.TempDir()
			blob := filepath.Join(cache, "models--org--big-GGUF", "blobs", hubtest.SHA256(data))

			cmd := helperCmd(t, h, cache, "org/big-GGUF", tt.threshold)
			mustNoError(t, cmd.Start())
			waitFor(t, "the child to download 150 kB", func() bool {
				return h.Stats("org/big-GGUF", "big-Q4_0.gguf").Bytes >= 150_000
			})
			mustNoError(t, cmd.Process.Kill()) // SIGKILL: no chance to clean up
			_ = cmd.Wait()

			checkNoFileExists(t, blob) // never a half-written blob
			checkFileExists(t, blob+tt.leaves)
			valid := int64(0)
			// <etag>.incomplete is always a valid prefix: huggingface_hub resumes it from its size.
			if part, err := os.ReadFile(blob + ".incomplete"); err == nil {
				checkTrue(t, bytes.Equal(data[:len(part)], part), ".incomplete holds the file's first bytes")
				valid = int64(len(part))
			}
			// Out-of-order parallel ranges live under a name only helexa knows, with their valid prefix.
			if scratch, err := os.ReadFile(blob + ".incomplete.parallel"); err == nil {
				st, err := os.ReadFile(blob + ".incomplete.json")
				mustNoError(t, err, "the parallel state file stays with the scratch file")
				var ps partState
				mustNoError(t, json.Unmarshal(st, &ps))
				checkTrue(t, ps.Prefix <= int64(len(scratch)) && bytes.Equal(data[:ps.Prefix], scratch[:ps.Prefix]), "valid prefix ", ps.Prefix)
				valid = max(valid, ps.Prefix)
			}

			h.Throttle("org/big-GGUF", "big-Q4_0.gguf", 0)
			tc := newTestClient(t, h, func(o *Options) { o.CacheDir = cache; o.ParallelThreshold = tt.threshold; o.Connections = 4 })
			before := len(h.Stats("org/big-GGUF", "big-Q4_0.gguf").Ranges)
			res, err := tc.Resolve(context.Background(), "org/big-GGUF")
			mustNoError(t, err)
			got, _ := os.ReadFile(res.ModelPath)
			checkTrue(t, bytes.Equal(data, got), "resumed file is intact")
			ranges := h.Stats("org/big-GGUF", "big-Q4_0.gguf").Ranges[before:]
			checkTrue(t, slices.ContainsFunc(ranges, func(r string) bool { return strings.HasPrefix(r, fmt.Sprintf("bytes=%d-", valid)) }), "resumes at the valid prefix ", valid, ": ", ranges)
			for _, r := range ranges {
				from, _ := strconv.ParseInt(strings.TrimPrefix(strings.Split(r, "-")[0], "bytes="), 10, 64)
				checkTrue(t, from >= valid, "nothing before the valid prefix is fetched again: ", r)
			}
			checkNoFileExists(t, blob+".incomplete")
			checkNoFileExists(t, blob+".incomplete.json")
			checkNoFileExists(t, blob+".incomplete.parallel")
		})
	}
}

func TestTwoProcessesPullTheSameFile(t *testing.T) {
	h := hubtest.New(t)
	data := randBytes(t, 200_000)
	h.AddRepo("org/m-GGUF", map[string][]byte{"m-Q8_0.gguf": data})
	h.Throttle("org/m-GGUF", "m-Q8_0.gguf", 400_000) // ~0.5s: the two pulls overlap
	cache := t.TempDir()
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for range 2 {
		cmd := helperCmd(t, h, cache, "org/m-GGUF", 1<<30)
		out := &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = out, out
		mustNoError(t, cmd.Start())
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	for i, cmd := range cmds {
		checkNoError(t, cmd.Wait(), "process ", i, ": ", outs[i].String())
	}
	checkEqual(t, 1, h.Stats("org/m-GGUF", "m-Q8_0.gguf").Gets, "one download, the other process waits on the lock")
	got, err := os.ReadFile(filepath.Join(cache, "models--org--m-GGUF", "blobs", hubtest.SHA256(data)))
	mustNoError(t, err)
	checkTrue(t, bytes.Equal(data, got), "the blob is intact")
}
