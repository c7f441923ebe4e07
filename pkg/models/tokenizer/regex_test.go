package tokenizer

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlclark/regexp2"
)

// commonRegexes are the pre-tokenizer regexes of every supported family
// and the known tokenizer.json patterns: all must run on the linear-time
// engine.
func commonRegexes() []string {
	seen := map[string]bool{}
	var out []string
	add := func(e string) {
		if !seen[e] && !strings.HasPrefix(e, "*") {
			seen[e] = true
			out = append(out, e)
		}
	}
	for _, chain := range familyRegexes {
		for _, e := range chain {
			add(e)
		}
	}
	for e := range hfKnownRegex {
		add(e)
	}
	for _, e := range []string{reLlama3, reQwen2, reGPT2Words} {
		add(e)
	}
	slices.Sort(out)
	return out
}

var regexTexts = []string{
	"a\u00a0b  \u00a0 c", "x\u2028y\u2029z", "\u3000\u3000東京 \u3000!", " \t\n\r\v\f\u0085 end",
	"I'm you'RE it'S 'll 'LL 'x 'ſ 'K", "1234567 12 3.14 ٣٤٥ ½", "   \n\n  \n x  ", "a!!\r\n\r\nb",
	"🚀🚀 😶‍🌫️ naïve é", "  trailing  ", "\n", "", "ab\u00a0\u00a0", "Hello,\u00a0world!\u2028\u2028next",
	"(x|y) [z] {1,2} $5 ^_^ a.b,c!d?e…f。g，h、", "  \n", " ", "\t\tx", "ÀÖØö ƺ µ Ａｚ 𐐀",
}

// backtrackSplit is regexp2's split of text, the reference.
func backtrackSplit(t testing.TB, pattern, text string) []int {
	t.Helper()
	re, err := regexp2.Compile(pattern, regexp2.None)
	if err != nil {
		t.Fatal(err)
	}
	out, err := (&splitRegex{pattern: pattern, bt: re}).split(context.Background(), []rune(text), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func linearSplit(t testing.TB, pattern, text string) []int {
	t.Helper()
	r, err := compileSplitRegex(pattern, pattern)
	if err != nil {
		t.Fatal(err)
	}
	if r.re == nil {
		t.Fatalf("%q runs on the backtracking engine", pattern)
	}
	var buf []byte
	out, err := r.split(context.Background(), []rune(text), &buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLinearRegexMatchesBacktracking: every common pre-tokenizer regex runs
// on Go's regexp and splits exactly as regexp2 does.
func TestLinearRegexMatchesBacktracking(t *testing.T) {
	extra := []string{`x*`, `a|`, `\s+\z`, `(?i:'s|'t|'re)`, `[^\s]+`, `\p{N}{1,3}`, `[\u4e00-\u9fa5]+`, `\x41+|\e`}
	for _, pattern := range append(commonRegexes(), extra...) {
		for _, text := range regexTexts {
			got, want := linearSplit(t, pattern, text), backtrackSplit(t, pattern, text)
			if !slices.Equal(got, want) {
				t.Errorf("%q on %q: linear %v, regexp2 %v", pattern, text, got, want)
			}
		}
	}
}

// TestRegexFallback: what RE2 cannot express the same way runs on regexp2.
func TestRegexFallback(t *testing.T) {
	for _, pattern := range []string{`(?=a)a`, `\bx`, `^a`, `a$`, `(a)\1`, `\w+`, `\s+(?!\S)x`, `(?i)a`, `[a-z-[aeiou]]`, `(?i:[a-z])`, `\S\s+(?!\S)|\s+`} {
		if _, _, ok := translateRE2(pattern); ok {
			t.Errorf("%q translated for the linear engine", pattern)
		}
		r, err := compileSplitRegex(pattern, pattern)
		if err != nil {
			t.Fatalf("%q: %v", pattern, err)
		}
		if r.bt == nil || r.bt.MatchTimeout != RegexMatchTimeout {
			t.Errorf("%q: want regexp2 with a match timeout", pattern)
		}
	}
}

// FuzzLinearRegex: the linear engine splits like regexp2 on any text.
func FuzzLinearRegex(f *testing.F) {
	for _, s := range regexTexts {
		f.Add(s)
	}
	patterns := commonRegexes()
	f.Fuzz(func(t *testing.T, s string) {
		s = sanitize(s)
		for _, p := range patterns {
			if got, want := linearSplit(t, p, s), backtrackSplit(t, p, s); !slices.Equal(got, want) {
				t.Fatalf("%q on %q: linear %v, regexp2 %v", p, s, got, want)
			}
		}
	})
}

// splitTokenizerJSON is a byte-level tokenizer.json whose pre-tokenizer is
// one Split regex.
func splitTokenizerJSON(t testing.TB, pattern string) []byte {
	t.Helper()
	doc := map[string]any{
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": pattern}, "behavior": "Isolated"},
			map[string]any{"type": "ByteLevel", "use_regex": false},
		}},
		"decoder": map[string]any{"type": "ByteLevel"},
		"model":   map[string]any{"type": "BPE", "vocab": map[string]int{"x": 0, "y": 1, "xx": 2}, "merges": []string{"x x"}},
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestReDoSPattern: a catastrophic pattern either runs in linear time or
// stops at the match timeout with an error naming the pattern.
func TestReDoSPattern(t *testing.T) {
	prompt := strings.Repeat("x", 40)
	tests := []struct {
		pattern string
		timeout bool
	}{
		{`(x+x+)+y`, false},
		{`(x+x+)+(?=y)`, true},
	}
	for _, tc := range tests {
		tk, err := FromHF(splitTokenizerJSON(t, tc.pattern), nil)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		ids, err := tk.Encode(prompt, false, false)
		took := time.Since(start)
		if took > RegexMatchTimeout+5*time.Second {
			t.Errorf("%q: took %v", tc.pattern, took)
		}
		switch {
		case tc.timeout && (!errors.Is(err, ErrRegexTimeout) || !strings.Contains(err.Error(), tc.pattern)):
			t.Errorf("%q: error %v, want a timeout naming the pattern", tc.pattern, err)
		case tc.timeout && strings.Contains(err.Error(), prompt):
			t.Errorf("%q: the error quotes the prompt: %v", tc.pattern, err)
		case !tc.timeout && (err != nil || len(ids) != 20):
			t.Errorf("%q: %v, %v; want 20 tokens", tc.pattern, ids, err)
		}
	}
}

// TestEncodeContext: a done context stops tokenizing with its error.
func TestEncodeContext(t *testing.T) {
	tk, err := FromHF(splitTokenizerJSON(t, `x`), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if ids, err := tk.EncodeContext(ctx, "xxxx", false, false); err != nil || len(ids) != 4 {
		t.Fatalf("live context: %v %v", ids, err)
	}
	cancel()
	if _, err := tk.EncodeContext(ctx, "xxxx", false, false); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: %v", err)
	}
	dl, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	long := strings.Repeat("x", 10*ctxCheckEvery)
	var buf []byte
	r, err := compileSplitRegex(`x`, `x`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.split(dl, []rune(long), &buf, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("split past its deadline: %v", err)
	}
}

// FuzzFromHF: loading any tokenizer.json / tokenizer_config.json pair
// never panics, and a tokenizer that loads encodes and decodes a short text
// within the regex match timeout.
func FuzzFromHF(f *testing.F) {
	f.Add([]byte(spmStyleJSON), []byte(`{"bos_token": "<s>", "eos_token": "</s>"}`))
	f.Add(splitTokenizerJSON(f, `\s+(?!\S)|\s+|x+`), []byte(nil))
	f.Add(splitTokenizerJSON(f, `(x+x+)+(?=y)`), []byte(`{"add_bos_token": true}`))
	f.Add([]byte(`{"decoder": {"type": "ByteLevel"}, "pre_tokenizer": {"type": "ByteLevel", "use_regex": true}, "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]}}`), []byte(`{"eos_token": {"content": "a"}}`))
	f.Add([]byte(`{"model": {"type": "BPE", "vocab": {"a": 70000}, "byte_fallback": true, "merges": []}}`), []byte(`{`))
	f.Fuzz(func(t *testing.T, tokJSON, cfgJSON []byte) {
		tk, err := FromHF(tokJSON, cfgJSON)
		if err != nil {
			if !errors.Is(err, ErrInvalidVocab) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*RegexMatchTimeout)
		defer cancel()
		ids, err := tk.EncodeContext(ctx, "ab xx y\n\n  <s>", true, true)
		if err == nil {
			_ = tk.Decode(ids)
		}
	})
}

// TestFamiliesRunLinear: every supported GGUF pre-tokenizer family and the
// common tokenizer.json patterns compile for the linear-time engine.
func TestFamiliesRunLinear(t *testing.T) {
	for pre := range preAliases {
		p, err := newPretokenizer(pre)
		if err != nil {
			t.Fatalf("%q: %v", pre, err)
		}
		for _, st := range p.steps {
			if st.kind == stepRegex && st.re.bt != nil {
				t.Errorf("%q: %q runs on the backtracking engine", pre, st.re.pattern)
			}
		}
	}
	for _, e := range commonRegexes() {
		p, err := compileChain([]string{e}, false)
		if err != nil {
			t.Fatal(err)
		}
		if p.steps[0].re.bt != nil {
			t.Errorf("%q runs on the backtracking engine", e)
		}
	}
}

// TestQuadraticPatternBudget: a linear-time pattern whose every match
// scans the rest of the text (n² in all) stops at the split's time budget
// with an error naming the pattern.
func TestQuadraticPatternBudget(t *testing.T) {
	const pattern = `a[^z]*z|a`
	tk, err := FromHF(splitTokenizerJSON(t, pattern), nil)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("a", 100_000) // about 5e9 steps unbounded: minutes
	start := time.Now()
	_, err = tk.Encode(text, false, false)
	budget := RegexMatchTimeout + time.Duration(len(text))*regexBudgetPerByte
	if took := time.Since(start); took > budget+5*time.Second {
		t.Errorf("took %v, budget %v", took, budget)
	}
	if !errors.Is(err, ErrRegexTimeout) || !strings.Contains(err.Error(), pattern) {
		t.Fatalf("err = %v, want a timeout naming the pattern", err)
	}
}
