package engine

import (
	"testing"

	"github.com/helexa/helexa/pkg/executor"
)

// tagTokenizer is a byte tokenizer with two extra ids: 0 is the control
// token <|python_tag|> (shown only by the tool decoder), 1 ends the
// generation; id b+2 is byte b.
type tagTokenizer struct{}

const pythonTagText = "<|python_tag|>"

func (tagTokenizer) Encode(text string, _, _ bool) ([]int32, error) {
	ids := make([]int32, len(text))
	for i := range len(text) {
		ids[i] = int32(text[i]) + 2
	}
	return ids, nil
}
func (tagTokenizer) IsEOG(id int32) bool     { return id == 1 }
func (tagTokenizer) NewDecoder() Decoder     { return tagDecoder{} }
func (tagTokenizer) NewToolDecoder() Decoder { return tagDecoder{keep: true} }
func (tagTokenizer) TokenText(id int32) string {
	return tagDecoder{keep: true}.Add(id)
}
func (tagTokenizer) VocabSize() int { return 258 }

type tagDecoder struct{ keep bool }

func (d tagDecoder) Add(id int32) string {
	switch {
	case id == 0 && d.keep:
		return pythonTagText
	case id < 2:
		return ""
	}
	return string(rune(id - 2))
}
func (tagDecoder) Flush() string { return "" }

// TestGenerationKeepsPythonTagOnlyWithTools: a request that declares tools
// decodes with the tokenizer's tool decoder, others with the plain one.
func TestGenerationKeepsPythonTagOnlyWithTools(t *testing.T) {
	var g tagTokenizer
	m := &Model{Tokenizer: g}
	call, _ := g.Encode(`brave_search.call(query="x")`, false, false)
	ids := append(append([]int32{0}, call...), 1)
	for _, tc := range []struct {
		hasTools bool
		want     string
	}{
		{true, pythonTagText + `brave_search.call(query="x")`},
		{false, `brave_search.call(query="x")`},
	} {
		var p ParseOptions
		if tc.hasTools {
			p.Tools = []byte(`[{"type":"function"}]`)
		}
		gen := newGeneration(m, Options{}, p)
		var content, reason string
		for _, id := range ids {
			d, r := gen.accept(executor.Result{Token: id})
			if d != nil {
				content += d.Content
			}
			if r != "" {
				reason = r
				break
			}
		}
		if content != tc.want || reason != "stop" {
			t.Errorf("hasTools=%v: content %q finish %q, want %q stop", tc.hasTools, content, reason, tc.want)
		}
	}
}

func TestHasTools(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want bool
	}{
		{"", false}, {"null", false}, {"[]", false}, {`[{"type":"function"}]`, true}, {"{}", false},
	} {
		if got := hasTools([]byte(tc.raw)); got != tc.want {
			t.Errorf("hasTools(%q) = %v, want %v", tc.raw, got, tc.want)
		}
	}
}
