package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/engine"
)

func TestAskedCtx(t *testing.T) {
	tests := []struct {
		name string
		flag int
		env  string
		want ctxAsk
	}{
		{"nothing asked", 0, "", ctxAsk{}},
		{"the flag", 8192, "1024", ctxAsk{8192, "--num-ctx"}},
		{"the environment", 0, "1024", ctxAsk{1024, "HELEXA_NUM_CTX"}},
		{"a malformed environment is not a request", 0, "lots", ctxAsk{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HELEXA_NUM_CTX", tt.env)
			if got := askedCtx(tt.flag); got != tt.want {
				t.Errorf("askedCtx(%d) = %+v, want %+v", tt.flag, got, tt.want)
			}
		})
	}
}

// TestCappedWarning: a context smaller than asked for is reported, with
// the reason when it is the model's trained maximum.
func TestCappedWarning(t *testing.T) {
	trained := engine.ModelDetails{ContextTrain: 2048}
	tests := []struct {
		name string
		ask  ctxAsk
		got  int
		d    engine.ModelDetails
		want string // "" = no warning
	}{
		{"no request", ctxAsk{}, 2048, trained, ""},
		{"granted", ctxAsk{1024, "--num-ctx"}, 1024, trained, ""},
		{"exactly the trained size", ctxAsk{2048, "--num-ctx"}, 2048, trained, ""},
		{"above the trained size", ctxAsk{8192, "--num-ctx"}, 2048, trained,
			"warning: --num-ctx 8192 is more than stories260K.gguf was trained for: it runs with its trained context of 2048 tokens"},
		{"above, from the environment", ctxAsk{8192, "HELEXA_NUM_CTX"}, 2048, trained, "warning: HELEXA_NUM_CTX 8192 is more than"},
		{"a daemon's model in use", ctxAsk{4096, "--num-ctx"}, 1024, trained, "runs with a context of 1024 tokens (a daemon does not reload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cappedWarning(tt.ask, tt.got, "/models/stories260K.gguf", tt.d)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("warning %q, want %q", got, tt.want)
			}
		})
	}
}

// TestContextHints: what run says when the context is full, or the prompt
// does not fit, depends on whether a larger --num-ctx can help.
func TestContextHints(t *testing.T) {
	tests := []struct {
		name      string
		size      int
		train     int
		full      []string
		tooLong   string
		notInFull string
	}{
		{"at the trained maximum", 2048, 2048,
			[]string{"(2048 of 2048 tokens, the most this model was trained for)", "-n/--num-predict", "shorten the prompt"},
			"the most this model was trained for: shorten the prompt", "--num-ctx"},
		{"room to grow", 64, 2048, []string{"(64 of 64 tokens)", "raise it with --num-ctx (up to 2048, what the model was trained for)"},
			"raise it with --num-ctx", "-n/"},
		{"trained size unknown", 64, 0, []string{"(64 of 64 tokens)", "raise it with --num-ctx"}, "raise it with --num-ctx", "trained"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := engine.ModelDetails{Context: tt.size, ContextTrain: tt.train}
			note := contextFullNote(engine.Usage{PromptTokens: 5, CompletionTokens: tt.size - 5, Context: tt.size}, d)
			checkContains(t, "context-full note", note, tt.full...)
			if strings.Contains(note, tt.notInFull) {
				t.Errorf("note %q holds %q", note, tt.notInFull)
			}
			base := errors.New("the prompt is 5000 tokens")
			err := promptTooLong(tt.size, d, base)
			if !errors.Is(err, base) || !strings.Contains(err.Error(), tt.tooLong) {
				t.Errorf("prompt-too-long error %q, want %q wrapping the engine's", err, tt.tooLong)
			}
		})
	}
}

// TestRunContextMessages runs the model: --num-ctx above its trained
// context draws a warning; a full context suggests a larger --num-ctx up
// to the trained size; a run without a daemon says it loads in-process.
func TestRunContextMessages(t *testing.T) {
	isolate(t)
	model := fixtures.Path(t, "models", "stories260K.gguf")
	tests := []struct {
		name     string
		opts     func(*runOptions)
		stderr   []string
		noStderr []string
	}{
		{"above the trained context", func(o *runOptions) { o.NumCtx, o.NumPredict = 8192, 4 },
			[]string{"warning: --num-ctx 8192 is more than stories260K.gguf was trained for: it runs with its trained context of 2048 tokens",
				"no helexa daemon answers at http://127.0.0.1:1 (from $HELEXA_HOST): loading the model in this process"},
			[]string{"context is full"}},
		{"a small context fills", func(o *runOptions) { o.NumCtx, o.Raw = 64, true },
			[]string{"[the context is full (64 of 64 tokens): the answer was cut off; raise it with --num-ctx (up to 2048, what the model was trained for)]"},
			[]string{"warning:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := greedyRunOptions()
			tt.opts(&o)
			var out, errb bytes.Buffer
			if err := runRun(context.Background(), withArgs(o, model, "Once upon a time"), streams{In: strings.NewReader(""), Out: &out, Err: &errb}); err != nil {
				t.Fatalf("runRun: %v\nstderr: %s", err, errb.String())
			}
			checkContains(t, "stderr", errb.String(), tt.stderr...)
			for _, w := range tt.noStderr {
				if strings.Contains(errb.String(), w) {
					t.Errorf("stderr holds %q:\n%s", w, errb.String())
				}
			}
			if n := strings.Count(errb.String(), "loading the model in this process"); n != 1 {
				t.Errorf("the in-process line shows %d times, want once:\n%s", n, errb.String())
			}
		})
	}
}
