package loader

import (
	"context"
	"errors"

	"github.com/helexa/helexa/pkg/runner"
)

// output is what one completion produced.
type output struct {
	tokens []int32
	text   string
	reason string
	res    runner.Result
	err    error
}

func complete(ctx context.Context, m *runner.Manager, req runner.CompletionRequest) output {
	var o output
	o.res, o.err = m.Complete(ctx, req, func(d runner.Delta) error {
		o.text += d.Content
		for _, ti := range d.Tokens {
			o.tokens = append(o.tokens, ti.ID)
		}
		return nil
	})
	o.reason = o.res.FinishReason
	return o
}

func kindOf(err error) runner.Kind {
	var re *runner.Error
	if errors.As(err, &re) {
		return re.Kind
	}
	return ""
}
