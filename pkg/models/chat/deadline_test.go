package chat

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestDeadlineBetweenIterations: a loop whose every body is slow (a sort
// of a long list) stops at the first iteration after the render's
// deadline, not when the loop or another budget ends.
func TestDeadlineBetweenIterations(t *testing.T) {
	tp, err := Compile(`{% set l = range(200000)|list %}{% for i in range(1000) %}{% set m = l|sort(reverse=true) %}{% endfor %}`)
	if err != nil {
		t.Fatal(err)
	}
	tp = tp.WithLimits(Limits{RenderTime: 300 * time.Millisecond})
	start := time.Now()
	_, err = tp.Render(context.Background(), Input{Messages: limitMessages})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitRenderTime {
		t.Fatalf("got %v, want the render-time limit", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("stopped %v after it started; want soon after its 300 ms limit", took)
	}
}

// TestSourceBytesLimit: a template over MaxSourceBytes is refused with a
// *LimitError before it is lexed; one at the limit compiles.
func TestSourceBytesLimit(t *testing.T) {
	if _, err := Compile(strings.Repeat("x", MaxSourceBytes)); err != nil {
		t.Fatalf("a template of MaxSourceBytes: %v", err)
	}
	start := time.Now()
	_, err := Compile(strings.Repeat("(", 64<<20))
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitSourceBytes || !errors.Is(err, ErrTemplate) {
		t.Fatalf("a 64 MiB template: %v, want the source-bytes limit", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("refusing a 64 MiB template took %v", took)
	}
}
