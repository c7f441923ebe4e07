package engine

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/helexa/helexa/pkg/sampling"
)

// lockedBuffer is a bytes.Buffer safe for the scheduler's and the
// caller's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines(id string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.b.String(), "\n") {
		if strings.Contains(line, "id="+id+" ") {
			out = append(out, line)
		}
	}
	return out
}

// TestRequestLogLines: every request logs one line when it starts and one
// when it ends, under the caller's request id, with the token counts,
// timings and the finish reason or error.
func TestRequestLogLines(t *testing.T) {
	tests := []struct {
		name  string
		req   CompletionRequest
		lines [][]string // per expected line, in order: what it contains
	}{
		{"finished", seeded("log me", 1, 4), [][]string{
			{`msg="request started" id=finished model=toy kind=completion prompt_tokens=7 max_tokens=4`},
			{`msg="request finished" id=finished model=toy status=length prompt_tokens=7 cached_tokens=0 generated_tokens=4 load_ms=`,
				"prefill_ms=", "decode_ms=", "total_ms="},
		}},
		{"refused", seeded(strings.Repeat("x", 200), 1, 4), [][]string{
			{`msg="request refused" id=refused model=toy status=context_length`, "201 tokens"},
		}},
		{"bad", CompletionRequest{Model: "toy", Prompt: "x", Options: Options{MaxTokens: -1}}, [][]string{
			{`msg="request refused" id=bad model=toy status=bad_request`},
		}},
		{"failed", seeded("unlucky", 13, 4), [][]string{
			{`msg="request started" id=failed`},
			{`msg="request failed" id=failed model=toy status=internal prompt_tokens=8 cached_tokens=0 generated_tokens=0`,
				`err="step for this request failed: NaN logits"`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf lockedBuffer
			cfg := DefaultConfig()
			cfg.NumCtx, cfg.KeepAlive = 128, -1
			l := &fakeLoader{setup: func(f *fakeExec) {
				f.seqErr = func(p sampling.Params) error {
					if p.Seed == 13 {
						return errors.New("NaN logits")
					}
					return nil
				}
			}}
			m := NewManager(cfg, l, slog.New(slog.NewTextHandler(&buf, nil)))
			t.Cleanup(func() { _ = m.Close(context.Background()) })
			complete(WithRequestID(context.Background(), tt.name), m, tt.req)
			got := buf.lines(tt.name)
			if len(got) != len(tt.lines) {
				t.Fatalf("%d log lines for the request, want %d:\n%s", len(got), len(tt.lines), strings.Join(got, "\n"))
			}
			for i, wants := range tt.lines {
				for _, want := range wants {
					if !strings.Contains(got[i], want) {
						t.Errorf("line %d:\n%s\nwant it to contain\n%s", i, got[i], want)
					}
				}
			}
		})
	}
}
