package engine

import (
	"context"
	"sync/atomic"
	"testing"
)

// ctxTok records whether it was asked to encode under the request's context.
type ctxTok struct {
	*fakeTok
	sawRequest *atomic.Bool
}

type ctxTokKey struct{}

func (c ctxTok) EncodeContext(ctx context.Context, text string, addSpecial, parseSpecial bool) ([]int32, error) {
	if ctx.Value(ctxTokKey{}) != nil {
		c.sawRequest.Store(true)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.fakeTok.Encode(text, addSpecial, parseSpecial)
}

// TestEncodeUnderRequestContext: a tokenizer that can stop early is given
// the request's context, so cancelling the request stops tokenizing.
func TestEncodeUnderRequestContext(t *testing.T) {
	var saw atomic.Bool
	l := &fakeLoader{}
	m := newTestManager(t, l, nil)
	m.loader = wrapLoader{l, func(md *Model) { md.Tokenizer = ctxTok{md.Tokenizer.(*fakeTok), &saw} }}
	ctx := context.WithValue(context.Background(), ctxTokKey{}, true)
	if o := complete(ctx, m, seeded("hello", 1, 2)); o.err != nil {
		t.Fatal(o.err)
	}
	if !saw.Load() {
		t.Fatal("the tokenizer was not given the request's context")
	}
}
