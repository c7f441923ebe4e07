package engine

import (
	"context"
	"testing"
)

// TestCountTokens: the count is the prompt Chat would compute, and the
// errors are Chat's.
func TestCountTokens(t *testing.T) {
	m := newTestManager(t, &fakeLoader{}, nil)
	want, _ := newFakeTok().Encode("user: hello\nassistant:", false, true)
	tests := []struct {
		name string
		req  ChatRequest
		n    int
		kind Kind
	}{
		{"prompt", ChatRequest{Model: "toy", Messages: []byte(`[{"role":"user","content":"hello"}]`)}, len(want), ""},
		{"bad messages", ChatRequest{Model: "toy", Messages: []byte(`{`)}, 0, KindBadRequest},
		{"no messages", ChatRequest{Model: "toy"}, 0, KindBadRequest},
		{"tool choice without tools", ChatRequest{Model: "toy", Messages: []byte(`[{"role":"user","content":"hello"}]`),
			ToolChoice: ToolChoice{Required: true}}, 0, KindBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := m.CountTokens(context.Background(), tt.req)
			if n != tt.n || kindOf(err) != tt.kind {
				t.Errorf("got %d, %v; want %d, kind %q", n, err, tt.n, tt.kind)
			}
		})
	}
	res, err := m.Chat(context.Background(), ChatRequest{Model: "toy", Messages: []byte(`[{"role":"user","content":"hello"}]`),
		Options: Options{MaxTokens: 2}}, nil)
	if err != nil || res.Usage.PromptTokens != len(want) {
		t.Errorf("chat after counting: %+v, %v", res.Usage, err)
	}
}
