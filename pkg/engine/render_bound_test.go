package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// boundedTok is fakeTok knowing its longest token.
type boundedTok struct{ *fakeTok }

func (boundedTok) MaxTokenBytes() int { return 3 }

// boundedTemplate records the byte bound it is given and stops past it.
type boundedTemplate struct {
	fakeTemplate
	got *int
}

func (b boundedTemplate) Render(ctx context.Context, in ChatInput) (string, error) {
	*b.got = in.MaxBytes
	text, err := b.fakeTemplate.Render(ctx, in)
	if in.MaxBytes > 0 && len(text) > in.MaxBytes {
		return "", fmt.Errorf("%w: output bytes %d", ErrRenderTooLong, in.MaxBytes)
	}
	return text, err
}

// TestChatRenderBound: a chat render is given renderSlack times the bytes
// the context can hold, and a render stopped there is the context-length
// refusal; a tokenizer that does not know its longest token gives no
// bound.
func TestChatRenderBound(t *testing.T) {
	for _, known := range []bool{true, false} {
		t.Run(fmt.Sprint("known ", known), func(t *testing.T) {
			var got int
			l := &fakeLoader{}
			m := newTestManager(t, l, nil)
			m.loader = wrapLoader{l, func(md *Model) {
				if known {
					md.Tokenizer = boundedTok{md.Tokenizer.(*fakeTok)}
				}
				md.Template = boundedTemplate{got: &got}
			}}
			chat := func(content string) error {
				_, err := m.Chat(context.Background(), ChatRequest{Model: "toy",
					Messages: []byte(`[{"role":"user","content":"` + content + `"}]`), Options: Options{MaxTokens: 1}}, nil)
				return err
			}
			if err := chat("hello"); err != nil {
				t.Fatal(err)
			}
			st, err := m.PS(context.Background())
			if err != nil || len(st) != 1 || st[0].Context <= 0 {
				t.Fatalf("ps: %+v, %v", st, err)
			}
			want := 0
			if known {
				want = renderSlack * 3 * st[0].Context
			}
			if got != want {
				t.Fatalf("bound %d, want %d", got, want)
			}
			if !known {
				return
			}
			err = chat(strings.Repeat("x", want))
			if kindOf(err) != KindContextLength || !strings.Contains(err.Error(), "rendering the chat template wrote more than") {
				t.Fatalf("a conversation past the bound: %v (kind %q), want a context-length refusal", err, kindOf(err))
			}
		})
	}
}
