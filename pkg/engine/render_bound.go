package engine

import (
	"errors"
	"fmt"
)

// renderSlack is how many times the most bytes a prompt that fits the
// context can have a chat render may write before it is stopped: the
// template's byte count includes text that macros and set blocks capture
// and then write again, so a render counts more than the prompt it returns.
const renderSlack = 4

// renderBound is the output-byte bound of a chat render on e: renderSlack
// times what fitsInBytes lets through, so a conversation that could never
// fit the context stops rendering early; 0 (the template's own bound) when
// the tokenizer does not know its longest token.
func renderBound(e *entry) int {
	mt, ok := e.model.Tokenizer.(maxTokenBytes)
	if !ok {
		return 0
	}
	per, nctx := mt.MaxTokenBytes(), e.sched.info.NCtx
	if per <= 0 || nctx <= 0 {
		return 0
	}
	return renderSlack * per * nctx
}

// renderError classifies a render failure: past maxBytes it is the
// context-length refusal fitsInBytes gives, otherwise the request's input
// is at fault (inputError).
func renderError(e *entry, err error, maxBytes int) error {
	if maxBytes <= 0 || !errors.Is(err, ErrRenderTooLong) {
		return inputError(err, "rendering the chat template failed")
	}
	nctx := e.sched.info.NCtx
	per := maxBytes / (renderSlack * nctx) // renderBound's factors
	return &Error{Kind: KindContextLength, Msg: fmt.Sprintf(
		"rendering the chat template wrote more than %d bytes, %d times the most a prompt can have that fits model %q's context of %d tokens (no token of this model covers more than %d bytes); shorten the conversation",
		maxBytes, renderSlack, e.name, nctx, per)}
}
