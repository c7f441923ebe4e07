package tokenizer

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
)

// TestFastSplittersMatchRegex: the hand-written llama3 / qwen2 / gpt-2
// splitters split exactly like their regexes run through regexp2 the way
// llama.cpp runs them, including on white space that Go's RE2 classes get
// wrong (NBSP, U+2028, U+3000) and on the fixture vector inputs.
func TestFastSplittersMatchRegex(t *testing.T) {
	texts := []string{
		"a\u00a0b  \u00a0 c", "x\u2028y\u2029z", "\u3000\u3000東京 \u3000!", " \t\n\r\v\f\u0085 end",
		"I'm you'RE it'S 'll 'LL 'x", "1234567 12 3.14 ٣٤٥ ½", "   \n\n  \n x  ", "a!!\r\n\r\nb", "🚀🚀 😶‍🌫️ naïve é",
		"  trailing  ", "\n", "", "ab\u00a0\u00a0", "Hello,\u00a0world!\u2028\u2028next",
	}
	// the inputs are the same in every .inp file
	raw, err := os.ReadFile(fixtures.Path(t, "tokenizer", loadPairs(t)[0].Inp))
	if err != nil {
		t.Fatal(err)
	}
	texts = append(texts, strings.Split(string(raw), "\n__ggml_vocab_test__\n")...)
	for _, tc := range []struct{ pre, regex string }{
		{"llama-bpe", reLlama3},
		{"qwen2", reQwen2},
		{"gpt-2", reGPT2Words},
	} {
		t.Run(tc.pre, func(t *testing.T) {
			fast, err := newPretokenizer(tc.pre)
			if err != nil {
				t.Fatal(err)
			}
			slow, err := compileChain([]string{tc.regex}, true)
			if err != nil {
				t.Fatal(err)
			}
			if fast.steps[0].kind == stepRegex || slow.steps[0].kind != stepRegex {
				t.Fatal("want a hand-written splitter against a regex")
			}
			for _, text := range texts {
				var a, b splitScratch
				got, err1 := fast.split(text, &a, classes(cptTable()))
				want, err2 := slow.split(text, &b, classes(cptTable()))
				if err1 != nil || err2 != nil {
					t.Fatalf("%q: %v %v", text, err1, err2)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%q: hand-written %v, regex %v", text, got, want)
				}
			}
		})
	}
}

// FuzzFastSplitters: the hand-written splitters agree with their regexes on
// any valid UTF-8 text.
func FuzzFastSplitters(f *testing.F) {
	for _, s := range []string{"a\u00a0b", "x\u2028y", "I'm 'LL 123", " \n\n x ", "東京 🚀"} {
		f.Add(s)
	}
	type pair struct{ fast, slow *pretokenizer }
	var pairs []pair
	for _, tc := range []struct{ pre, regex string }{{"llama-bpe", reLlama3}, {"qwen2", reQwen2}, {"gpt-2", reGPT2Words}} {
		fast, err1 := newPretokenizer(tc.pre)
		slow, err2 := compileChain([]string{tc.regex}, true)
		if err1 != nil || err2 != nil {
			f.Fatal(err1, err2)
		}
		pairs = append(pairs, pair{fast, slow})
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = sanitize(s)
		for _, p := range pairs {
			var a, b splitScratch
			got, err1 := p.fast.split(s, &a, classes(cptTable()))
			want, err2 := p.slow.split(s, &b, classes(cptTable()))
			if err1 != nil || err2 != nil || !slices.Equal(got, want) {
				t.Fatalf("%q: hand-written %v (%v), regex %v (%v)", s, got, err1, want, err2)
			}
		}
	})
}
