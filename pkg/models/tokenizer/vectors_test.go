package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/models/gguf"
)

type vectorPair struct {
	Inp, Out, Vocab string
}

func loadPairs(t testing.TB) []vectorPair {
	t.Helper()
	raw, err := os.ReadFile(fixtures.Path(t, "tokenizer", "pairs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pairs []vectorPair
	if err := json.Unmarshal(raw, &pairs); err != nil {
		t.Fatal(err)
	}
	return pairs
}

// loadGGUF opens a fixture GGUF (tokenizer/ or models/) and builds its
// tokenizer; results are shared between tests of one run.
var ggufCache sync.Map

func loadGGUF(t testing.TB, rel ...string) *Tokenizer {
	t.Helper()
	path := fixtures.Path(t, rel...)
	if tk, ok := ggufCache.Load(path); ok {
		return tk.(*Tokenizer)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	tk, err := FromGGUF(f)
	if err != nil {
		t.Fatalf("FromGGUF %s: %v", path, err)
	}
	ggufCache.Store(path, tk)
	return tk
}

type vectorCase struct {
	text string
	ids  []int32
}

func loadVectors(t testing.TB, p vectorPair) []vectorCase {
	t.Helper()
	inp, err := os.ReadFile(fixtures.Path(t, "tokenizer", p.Inp))
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(fixtures.Path(t, "tokenizer", p.Out))
	if err != nil {
		t.Fatal(err)
	}
	texts := strings.Split(string(inp), "\n__ggml_vocab_test__\n")
	if texts[len(texts)-1] == "" {
		texts = texts[:len(texts)-1]
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(texts) {
		t.Fatalf("%s: %d inputs, %d outputs", p.Inp, len(texts), len(lines))
	}
	cases := make([]vectorCase, len(texts))
	for i, txt := range texts {
		cases[i].text = txt
		for _, f := range strings.Fields(lines[i]) {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s line %d: %v", p.Out, i+1, err)
			}
			cases[i].ids = append(cases[i].ids, int32(n))
		}
	}
	return cases
}

func TestVectors(t *testing.T) {
	for _, p := range loadPairs(t) {
		t.Run(strings.TrimSuffix(p.Inp, ".gguf.inp"), func(t *testing.T) {
			tk := loadGGUF(t, "tokenizer", p.Vocab)
			cases := loadVectors(t, p)
			fails := 0
			for i, c := range cases {
				got, err := tk.Encode(c.text, false, false)
				if err != nil {
					t.Errorf("case %d %q: %v", i, c.text, err)
					continue
				}
				if !equalIDs(got, c.ids) {
					fails++
					t.Errorf("case %d %q:\n got  %v\n want %v", i, c.text, got, c.ids)
				}
				if dec := tk.Decode(c.ids); dec != c.text {
					t.Errorf("case %d: decode(want ids) = %q, want %q", i, dec, c.text)
				}
			}
			if fails == 0 {
				t.Logf("%s: %d/%d cases pass", filepath.Base(p.Vocab), len(cases), len(cases))
			}
		})
	}
}

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
