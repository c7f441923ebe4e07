package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
)

// storiesShort is the reference "short" case of stories260K.
type storiesShort struct {
	Tokens     []int32   `json:"tokens"`
	LastLogits []float32 `json:"last_logits"`
	Greedy     []struct {
		Token int32 `json:"token"`
	} `json:"greedy"`
}

func loadStoriesShort(t *testing.T) storiesShort {
	t.Helper()
	raw, err := os.ReadFile(fixtures.Path(t, "reference", "stories260K.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct{ Cases []storiesShort }
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	return ref.Cases[0]
}

func tokenFlag(tokens []int32) string {
	s := make([]string, len(tokens))
	for i, t := range tokens {
		s[i] = strconv.Itoa(int(t))
	}
	return strings.Join(s, ",")
}

// TestDebugLogits checks debug logits against llama.cpp, on one rank and
// split over two (--tp 2, a worker process).
func TestDebugLogits(t *testing.T) {
	for _, tp := range []int{1, 2} {
		t.Run("tp"+strconv.Itoa(tp), func(t *testing.T) { checkDebugLogits(t, tp) })
	}
}

func checkDebugLogits(t *testing.T, tp int) {
	ref := loadStoriesShort(t)
	var out bytes.Buffer
	opts := debugLogitsOptions{Model: fixtures.Path(t, "models", "stories260K.gguf"), Tokens: tokenFlag(ref.Tokens), Top: 3, Chunk: 2, TP: tp, JSON: true}
	if err := runDebugLogits(context.Background(), opts, streams{Out: &out}); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Tokens    []int32 `json:"tokens"`
		Positions []struct {
			Top [][2]float64 `json:"top"`
		} `json:"positions"`
		LastLogits []float32 `json:"last_logits"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out.String())
	}
	if len(rep.Tokens) != len(ref.Tokens) || len(rep.Positions) != len(ref.Tokens) || len(rep.Positions[0].Top) != 3 {
		t.Fatalf("report shape: %d tokens, %d positions", len(rep.Tokens), len(rep.Positions))
	}
	for i, want := range ref.LastLogits {
		if math.Abs(float64(rep.LastLogits[i]-want)) > 1e-3 {
			t.Fatalf("last logit %d: %g, llama.cpp %g", i, rep.LastLogits[i], want)
		}
	}
	if last := rep.Positions[len(rep.Positions)-1].Top[0]; int32(last[0]) != ref.Greedy[0].Token {
		t.Errorf("top token %v, llama.cpp %d", last, ref.Greedy[0].Token)
	}
}

// TestDebugGenerate checks debug generate's greedy tokens against
// llama.cpp, on one rank and on two.
func TestDebugGenerate(t *testing.T) {
	for _, tp := range []int{1, 2} {
		t.Run("tp"+strconv.Itoa(tp), func(t *testing.T) { checkDebugGenerate(t, tp) })
	}
}

func checkDebugGenerate(t *testing.T, tp int) {
	ref := loadStoriesShort(t)
	var out bytes.Buffer
	opts := debugGenerateOptions{Model: fixtures.Path(t, "models", "stories260K.gguf"), Tokens: tokenFlag(ref.Tokens), NumPredict: 12, TP: tp, JSON: true}
	if err := runDebugGenerate(context.Background(), opts, streams{Out: &out}); err != nil {
		t.Fatal(err)
	}
	var rep struct{ Tokens []int32 }
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Tokens) != 12 {
		t.Fatalf("%d tokens, want 12", len(rep.Tokens))
	}
	for i, tok := range rep.Tokens {
		if tok != ref.Greedy[i].Token {
			t.Fatalf("token %d: %d, llama.cpp %d (got %v)", i, tok, ref.Greedy[i].Token, rep.Tokens)
		}
	}
}

func TestDebugLogitsBadInput(t *testing.T) {
	model := fixtures.Path(t, "models", "stories260K.gguf")
	tests := []struct {
		name   string
		tokens string
		model  string
		want   string
	}{
		{"no tokens", "", model, "--tokens is required"},
		{"not a number", "1,x", model, `"x" is not a token id`},
		{"out of vocab", "1,999", model, "out of the vocabulary"},
		{"trailing comma", "1,2,", model, "entry 3 is empty"},
		{"double comma", "1,,2", model, "entry 2 is empty"},
		{"negative id", "1,-2", model, `"-2" is not a token id`},
		{"too large for int32", "1,4294967296", model, `"4294967296" is not a token id`},
		{"missing model", "1", model + ".missing", "missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := runDebugLogits(context.Background(), debugLogitsOptions{Model: tt.model, Tokens: tt.tokens, Top: 5}, streams{Out: &bytes.Buffer{}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestDebugGenerateBadInput(t *testing.T) {
	model := fixtures.Path(t, "models", "stories260K.gguf")
	tests := []struct {
		name   string
		model  string
		tokens string
		n      int
		want   string
	}{
		{"past the context", model, "1,2", 2047, "2 prompt tokens + -n 2047 = 2049 positions exceed the model's context length of 2048"},
		{"negative n", model, "1", -1, "must be zero or more"},
		{"vocab-only file", fixtures.Path(t, "models", "ggml-vocab-llama-spm.gguf"), "1", 4, "no tensors"},
		{"not a GGUF", fixtures.Path(t, "reference", "stories260K.json"), "1", 4, "not a GGUF file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := runDebugGenerate(context.Background(), debugGenerateOptions{Model: tt.model, Tokens: tt.tokens, NumPredict: tt.n}, streams{Out: &bytes.Buffer{}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want it to mention %q", err, tt.want)
			}
		})
	}
}
