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
