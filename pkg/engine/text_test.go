package engine

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

func isKindErr(err error, k Kind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}

func TestTexter(t *testing.T) {
	m := newTestManager(t, &fakeLoader{}, nil)
	ctx := context.Background()
	pieces, err := m.Tokenize(ctx, TokenizeRequest{Model: "m", Text: "hello world", AddSpecial: true, ParseSpecial: true})
	if err != nil || len(pieces) != 3 || pieces[0].ID != 0 || pieces[1].Text != "hello" || pieces[2].Text != " world" {
		t.Errorf("tokenize: %+v %v", pieces, err)
	}
	text, err := m.Detokenize(ctx, "m", []int32{pieces[1].ID, pieces[2].ID})
	if err != nil || text != "hello world" {
		t.Errorf("detokenize: %q %v", text, err)
	}
	if _, err := m.Detokenize(ctx, "m", []int32{1 << 20}); !isKindErr(err, KindBadRequest) {
		t.Errorf("detokenize of an id outside the vocabulary: %v", err)
	}
	prompt, err := m.ApplyTemplate(ctx, ChatRequest{Model: "m", Messages: json.RawMessage(`[{"role":"user","content":"hi"}]`)})
	if err != nil || prompt != "user: hi\nassistant:" {
		t.Errorf("apply template: %q %v", prompt, err)
	}
	if _, err := m.Tokenize(ctx, TokenizeRequest{Model: "missing-x", Text: "a"}); !isKindErr(err, KindNotFound) {
		t.Errorf("tokenize with a missing model: %v", err)
	}
}
