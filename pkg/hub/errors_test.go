package hub

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/helexa/helexa/pkg/hub/hubtest"
)

// TestUnreachableMessages: a request that cannot reach the Hub says which
// host, why in a few words and what to do — never the raw Go error text —
// while the raw error stays reachable through Unwrap for --verbose.
func TestUnreachableMessages(t *testing.T) {
	const u = "https://huggingface.co/api/models/foo/bar/revision/main?blobs=true"
	dns := &net.DNSError{Err: "no such host", Name: "huggingface.co", Server: "10.0.0.53:53", IsNotFound: true}
	wrap := func(err error) error {
		return &url.Error{Op: "Get", URL: u, Err: &net.OpError{Op: "dial", Net: "tcp", Err: err}}
	}
	tests := []struct {
		name, what string
		err        error
		want       string
	}{
		{name: "dns", err: wrap(dns), want: "cannot reach huggingface.co (DNS lookup failed): check the network or HF_ENDPOINT; offline, HF_HUB_OFFLINE=1 uses the cache"},
		{name: "refused", err: wrap(os.NewSyscallError("connect", syscall.ECONNREFUSED)), want: "cannot reach huggingface.co (connection refused): check the network or HF_ENDPOINT; offline, HF_HUB_OFFLINE=1 uses the cache"},
		{name: "no route", err: wrap(os.NewSyscallError("connect", syscall.EHOSTUNREACH)), want: "cannot reach huggingface.co (no route to the host): check"},
		{name: "unknown cause says the innermost words", err: wrap(errors.New("network is down")), want: "cannot reach huggingface.co (network is down): check"},
		{name: "mid-download", what: "org/m-GGUF/m-Q8_0.gguf", err: os.NewSyscallError("read", syscall.ECONNRESET),
			want: "org/m-GGUF/m-Q8_0.gguf: the connection to huggingface.co broke off (connection reset): check the network and run the command again to resume"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := newUnreachable(hostOf(u), tt.what, tt.err)
			got := err.Error()
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("message\n got %q\nwant %q", got, tt.want)
			}
			for _, raw := range []string{"dial tcp", "Get \"", "10.0.0.53", "lookup huggingface.co", "no such host"} {
				if strings.Contains(got, raw) {
					t.Errorf("message %q shows the raw Go error (%q)", got, raw)
				}
			}
			checkTrue(t, errors.Is(err, ErrUnreachable), "errors.Is ErrUnreachable")
			checkTrue(t, errors.Is(err, tt.err), "the raw cause unwraps")
		})
	}
}

// TestResolveUnreachableHub: resolving against a Hub nobody answers for
// gives the reworded error, not the raw one.
func TestResolveUnreachableHub(t *testing.T) {
	tc := newTestClient(t, hubtest.New(t), func(o *Options) { o.Endpoint, o.MaxRetries = "http://127.0.0.1:1", 1 })
	_, err := tc.Resolve(context.Background(), "org/m-GGUF")
	mustErrorIs(t, err, ErrUnreachable)
	checkEqual(t, "cannot reach 127.0.0.1:1 (connection refused): check the network or HF_ENDPOINT; offline, HF_HUB_OFFLINE=1 uses the cache", err.Error())
}

// TestLocalDirQuant: DIR:QUANT picks a quant among a local directory's GGUF
// files, as org/repo:QUANT does in a Hub repository, and each way it can
// go wrong says what to type instead.
func TestLocalDirQuant(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"m-Q8_0.gguf", "m-Q4_0.gguf", "other-Q4_0.gguf"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("GGUF"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "m-Q8_0.gguf")
	tests := []struct {
		ref      string
		wantFile string // resolved model file, or
		wantErr  string // the whole message
		is       error
	}{
		{ref: dir + ":Q8_0", wantFile: "m-Q8_0.gguf"},
		{ref: dir + ":q8_0", wantFile: "m-Q8_0.gguf"},
		{ref: dir + ":Q9", wantErr: fmt.Sprintf("quant %q not found in %s; available quants: Q4_0, Q8_0", "Q9", dir), is: ErrQuantNotFound},
		{ref: dir + ":Q4_0", is: ErrBadReference, wantErr: fmt.Sprintf("invalid model reference: %s has several GGUF files of one quant that are not the shards of a split model (m-Q4_0.gguf, other-Q4_0.gguf), so helexa cannot tell which to load; give the file's path instead of the directory, e.g. %s",
			dir, filepath.Join(dir, "m-Q4_0.gguf"))},
		{ref: file + ":Q8_0", is: ErrBadReference, wantErr: fmt.Sprintf("invalid model reference: %s is a file, and :Q8_0 picks a quant among a directory's GGUF files; drop the :Q8_0", file)},
		{ref: filepath.Join(dir, "none.gguf"), is: fs.ErrNotExist,
			wantErr: filepath.Join(dir, "none.gguf") + " does not exist: check the path (a Hub model is org/name[:QUANT]; `helexa list` shows the cached ones)"},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			r, err := ParseRef(tt.ref, BuiltinAliases())
			mustNoError(t, err)
			checkTrue(t, r.Local(), "a local reference")
			res, err := ResolveLocal(r)
			if tt.wantErr != "" {
				mustError(t, err)
				checkEqual(t, tt.wantErr, err.Error())
				checkErrorIs(t, err, tt.is)
				return
			}
			mustNoError(t, err)
			checkEqual(t, filepath.Join(dir, tt.wantFile), res.ModelPath)
			checkEqual(t, tt.ref, res.Ref)
		})
	}
}

// TestLocalQuantStaysHubRef: org/name:QUANT stays a Hub reference even when
// a folder org/name exists in the working directory (as org/name does).
func TestLocalQuantStaysHubRef(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "org", "m"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	r, err := ParseRef("org/m:Q8_0", nil)
	mustNoError(t, err)
	checkFalse(t, r.Local(), "org/m:Q8_0 is local")
	r, err = ParseRef("./org/m:Q8_0", nil)
	mustNoError(t, err)
	checkTrue(t, r.Local(), "./org/m:Q8_0 is local")
	checkEqual(t, "Q8_0", r.Quant)
	// An alias stays an alias beside a folder named like its first part.
	if err := os.MkdirAll(filepath.Join(dir, "qwen3"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err = ParseRef("qwen3:0.6b", BuiltinAliases())
	mustNoError(t, err)
	checkEqual(t, "qwen3:0.6b", r.Alias)
	r, err = ParseRef("./qwen3:0.6b", BuiltinAliases())
	mustNoError(t, err)
	checkTrue(t, r.Local(), "./qwen3:0.6b is local")
}
