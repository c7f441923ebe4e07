package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestExitCode(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name    string
		ctx     context.Context
		err     error
		code    int
		printed bool
	}{
		{"success", context.Background(), nil, 0, false},
		{"error", context.Background(), errors.New("boom"), 1, true},
		{"interrupted", cancelled, fmt.Errorf("generating: %w", context.Canceled), 130, false},
		{"error after interrupt", cancelled, errors.New("disk full"), 1, true},
		{"cancelled without a signal", context.Background(), context.Canceled, 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if got := exitCode(c.ctx, c.err, &buf); got != c.code {
				t.Errorf("exit code %d, want %d", got, c.code)
			}
			if printed := buf.Len() > 0; printed != c.printed {
				t.Errorf("printed %q, want printed=%v", buf.String(), c.printed)
			}
		})
	}
}
