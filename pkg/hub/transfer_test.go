package hub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/helexa/helexa/pkg/hub/hubtest"
)

// TestStartPrefixRecovery covers every state an interrupted download can
// leave (helexa killed in either phase, huggingface_hub's own partial file)
// and checks what a resumed download starts from.
func TestStartPrefixRecovery(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 100) // the file: 1000 bytes
	garbage := bytes.Repeat([]byte{0xee}, 300)
	tests := []struct {
		name            string
		part, scratch   []byte // nil: absent
		state           string // "": absent
		want            int64
		wantPartContent []byte
	}{
		{name: "nothing yet", want: 0},
		{name: "huggingface_hub partial", part: data[:400], want: 400, wantPartContent: data[:400]},
		{name: "killed in parallel phase", scratch: append(append([]byte{}, data[:300]...), garbage...),
			state: `{"size":1000,"prefix":300}`, want: 300, wantPartContent: data[:300]},
		{name: "python got further after the kill", part: data[:500], scratch: append(append([]byte{}, data[:300]...), garbage...),
			state: `{"size":1000,"prefix":300}`, want: 500, wantPartContent: data[:500]},
		{name: "scratch without state is unusable", part: data[:100], scratch: data[:700], want: 100, wantPartContent: data[:100]},
		{name: "state for a different size", scratch: data[:700], state: `{"size":999,"prefix":700}`, want: 0},
		{name: "state without scratch cuts the partial", part: append(append([]byte{}, data[:200]...), garbage...),
			state: `{"size":1000,"prefix":200}`, want: 200, wantPartContent: data[:200]},
		{name: "partial longer than the file", part: append(append([]byte{}, data...), garbage...), want: 0, wantPartContent: []byte{}},
		{name: "corrupt state file", scratch: data[:700], state: `{bad`, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blob := filepath.Join(t.TempDir(), "etag")
			d := newTransfer(New(Options{}), blob, "http://x", false, "org/m/f.gguf", int64(len(data)))
			for p, content := range map[string][]byte{d.part: tt.part, d.scratch: tt.scratch} {
				if content != nil {
					mustNoError(t, os.WriteFile(p, content, 0o644))
				}
			}
			if tt.state != "" {
				mustNoError(t, os.WriteFile(d.statePath, []byte(tt.state), 0o644))
			}
			got, err := d.startPrefix()
			mustNoError(t, err)
			checkEqual(t, tt.want, got)
			checkNoFileExists(t, d.scratch)
			checkNoFileExists(t, d.statePath)
			part, err := os.ReadFile(d.part)
			if tt.wantPartContent == nil {
				checkTrue(t, os.IsNotExist(err), "no .incomplete file")
				return
			}
			mustNoError(t, err)
			checkTrue(t, bytes.Equal(tt.wantPartContent, part), ".incomplete is the valid prefix")
		})
	}
}

func TestVerifyFile(t *testing.T) {
	data := []byte("some model bytes")
	p := filepath.Join(t.TempDir(), "f.incomplete")
	mustNoError(t, os.WriteFile(p, data, 0o644))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	n := int64(len(data))
	tests := []struct {
		name   string
		ctx    context.Context
		meta   fileMeta
		lfsSHA string
		is     error // nil: no error
	}{
		{name: "lfs sha256 from the API", meta: fileMeta{Size: n, ETag: "x"}, lfsSHA: hubtest.SHA256(data)},
		{name: "sha256 ETag", meta: fileMeta{Size: n, ETag: hubtest.SHA256(data)}},
		{name: "git blob id ETag", meta: fileMeta{Size: n, ETag: hubtest.GitSHA1(data)}},
		{name: "wrong sha256", meta: fileMeta{Size: n, ETag: "x"}, lfsSHA: hubtest.SHA256([]byte("other")), is: ErrChecksum},
		{name: "wrong git blob id", meta: fileMeta{Size: n, ETag: hubtest.GitSHA1([]byte("other"))}, is: ErrChecksum},
		{name: "wrong size", meta: fileMeta{Size: n + 1, ETag: hubtest.SHA256(data)}, is: ErrChecksum},
		{name: "interrupted", ctx: cancelled, meta: fileMeta{Size: n, ETag: hubtest.SHA256(data)}, is: context.Canceled},
	}
	for _, tt := range tests {
		ctx := tt.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		err := verifyFile(ctx, p, &tt.meta, tt.lfsSHA, "org/m/f.gguf")
		if tt.is == nil {
			checkNoError(t, err, tt.name)
			continue
		}
		checkErrorIs(t, err, tt.is, tt.name)
		if tt.is == context.Canceled {
			checkFalse(t, errors.Is(err, ErrChecksum), "an interrupted check is not a mismatch")
		}
	}
}

// TestExpiredCDNLinkIsRenewed: signed CDN links expire during a long
// download; the CDN's 403 then means "ask the Hub again", not "access
// denied", for sequential resumes and parallel ranges alike.
func TestExpiredCDNLinkIsRenewed(t *testing.T) {
	tests := []struct {
		name      string
		threshold int64
		uses      int
		drops     int
	}{
		{name: "sequential, link used up by a dropped connection", threshold: 1 << 30, uses: 1, drops: 2},
		{name: "parallel ranges outlive their links", threshold: 16 << 10, uses: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hubtest.New(t)
			data := randBytes(t, 200_000)
			h.AddRepo("org/m-GGUF", map[string][]byte{"m-Q8_0.gguf": data})
			h.ExpireLinks(tt.uses)
			if tt.drops > 0 {
				h.DropAfter("org/m-GGUF", "m-Q8_0.gguf", 50_000, tt.drops)
			}
			tc := newTestClient(t, h, func(o *Options) { o.ParallelThreshold, o.Connections = tt.threshold, 4 })
			res, err := tc.Resolve(context.Background(), "org/m-GGUF")
			mustNoError(t, err)
			got, _ := os.ReadFile(res.ModelPath)
			checkTrue(t, bytes.Equal(data, got), "file intact")
			st := h.Stats("org/m-GGUF", "m-Q8_0.gguf")
			checkTrue(t, st.Heads > 1, "the Hub was asked for a fresh link: ", st.Heads, " HEADs")
		})
	}
	// A CDN that refuses every fresh link ends the download with its own
	// message (not the Hub's "gated repository" advice) instead of looping.
	cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "Request has expired", http.StatusForbidden)
	}))
	defer cdn.Close()
	heads := 0
	d := newTransfer(New(Options{Endpoint: "http://hub.invalid", RetryBase: time.Millisecond}), filepath.Join(t.TempDir(), "etag"),
		cdn.URL+"/blob", false, "org/m/f.gguf", 1000)
	d.renewURL = func(context.Context) (*fileMeta, error) {
		heads++
		return &fileMeta{Location: fmt.Sprintf("%s/blob?sig=%d", cdn.URL, heads)}, nil
	}
	err := d.run(context.Background(), "org/m", "f.gguf")
	mustError(t, err)
	checkContains(t, err.Error(), "refused 50 fresh links")
	checkContains(t, err.Error(), "Request has expired")
	checkFalse(t, strings.Contains(err.Error(), "gated"), err)
	checkEqual(t, maxRenewals, heads)
}
