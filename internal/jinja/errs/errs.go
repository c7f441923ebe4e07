// Package errs holds the error helpers of the Jinja engine: wrapping that,
// like the github.com/pkg/errors helpers the engine was written against,
// returns nil when there is nothing to wrap.
package errs

import "fmt"

// Wrap returns err annotated with msg ("msg: err"), or nil when err is nil.
func Wrap(err error, msg string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", msg, err)
}

// Wrapf is Wrap with a formatted message.
func Wrapf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), err)
}
