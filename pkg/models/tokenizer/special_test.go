package tokenizer

import (
	"fmt"
	"slices"
	"testing"
)

func TestSpecialTokensQwen(t *testing.T) {
	tk := loadGGUF(t, "tokenizer", "vocab-qwen3.gguf")
	tests := []struct {
		name         string
		text         string
		parseSpecial bool
		want         []int32
	}{
		{"control as text", "<|im_end|>", false, []int32{27, 91, 318, 6213, 91, 29}},
		{"control parsed", "<|im_end|>", true, []int32{151645}},
		{"control inside text", "Hi<|im_end|>\n", true, []int32{13048, 151645, 198}},
		{"user-defined in plain text", "<think>", false, []int32{151667}},
		{"user-defined parsed", "<think>", true, []int32{151667}},
		{"two controls", "<|im_start|><|im_end|>", true, []int32{151644, 151645}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tk.Encode(tc.text, false, tc.parseSpecial)
			if err != nil {
				t.Fatal(err)
			}
			if !equalIDs(got, tc.want) {
				t.Errorf("Encode(%q, parse=%v) = %v, want %v", tc.text, tc.parseSpecial, got, tc.want)
			}
		})
	}
	if got := tk.Decode([]int32{13048, 151645}); got != "Hi" {
		t.Errorf("Decode hides control tokens: got %q", got)
	}
	if got := tk.DecodeWith([]int32{13048, 151645}, DecodeOptions{Special: true}); got != "Hi<|im_end|>" {
		t.Errorf("DecodeWith Special: got %q", got)
	}
	if got := tk.Decode([]int32{151667}); got != "<think>" {
		t.Errorf("user-defined tokens render: got %q", got)
	}
}

const qwen2Regex = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// TestAddedTokensParseSpecial: control tokens (<|im_end|>) come from text
// only with parseSpecial, user-defined ones (<think>, <tool_call>) from any
// text (as llama.cpp and Hugging Face do), from the GGUF vocabulary and
// from tokenizer.json added_tokens alike.
func TestAddedTokensParseSpecial(t *testing.T) {
	tokJSON, cfgJSON := hfFromGGUF(t, "vocab-qwen3.gguf", qwen2Regex,
		map[string]any{"bos_token": nil, "eos_token": "<|im_end|>", "add_bos_token": false})
	hf, err := FromHF(tokJSON, cfgJSON)
	if err != nil {
		t.Fatal(err)
	}
	tokenizers := map[string]*Tokenizer{"gguf": loadGGUF(t, "tokenizer", "vocab-qwen3.gguf"), "tokenizer.json": hf}
	tests := []struct {
		text          string
		plain, parsed []int32
	}{
		{"<think>", []int32{151667}, []int32{151667}},
		{"</think>", []int32{151668}, []int32{151668}},
		{"<tool_call>", []int32{151657}, []int32{151657}},
		{"</tool_call>", []int32{151658}, []int32{151658}},
		{"<|im_end|>", []int32{27, 91, 318, 6213, 91, 29}, []int32{151645}},
		{"Hi<think>x</think>\n", []int32{13048, 151667, 87, 151668, 198}, []int32{13048, 151667, 87, 151668, 198}},
		{"<|im_start|>user\n<tool_call>{}</tool_call><|im_end|>",
			[]int32{27, 91, 318, 4906, 91, 29, 872, 198, 151657, 6257, 151658, 27, 91, 318, 6213, 91, 29},
			[]int32{151644, 872, 198, 151657, 6257, 151658, 151645}},
	}
	for name, tk := range tokenizers {
		for _, tc := range tests {
			for _, parse := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%q/parse=%v", name, tc.text, parse), func(t *testing.T) {
					want := tc.plain
					if parse {
						want = tc.parsed
					}
					got, err := tk.Encode(tc.text, false, parse)
					if err != nil {
						t.Fatal(err)
					}
					if !equalIDs(got, want) {
						t.Errorf("Encode(%q, parse=%v) = %v, want %v", tc.text, parse, got, want)
					}
					if !parse && hasAdded(tk, got) {
						t.Errorf("plain encoding %v contains an added token", got)
					}
					if dec := tk.DecodeWith(got, DecodeOptions{Special: true}); dec != tc.text {
						t.Errorf("decode = %q, want %q", dec, tc.text)
					}
				})
			}
		}
	}
}

// TestAddedTokensSPM: the same rule for a SentencePiece vocabulary (Phi-3:
// </s> is user-defined, <|end|> control, both with rstrip).
func TestAddedTokensSPM(t *testing.T) {
	tk := loadGGUF(t, "tokenizer", "ggml-vocab-phi-3.gguf")
	tests := []struct {
		text  string
		parse bool
		want  []int32
	}{
		{"</s>", false, []int32{1533, 29879, 29958}},
		{"</s>", true, []int32{2}},
		{"a</s> b", false, []int32{263, 829, 29879, 29958, 289}},
		{"a</s> b", true, []int32{263, 2, 289}}, // rstrip eats the space
		{"<|end|>", false, []int32{529, 29989, 355, 29989, 29958}},
		{"<|end|>", true, []int32{32007}},
	}
	for _, tc := range tests {
		got, err := tk.Encode(tc.text, false, tc.parse)
		if err != nil || !equalIDs(got, tc.want) {
			t.Errorf("Encode(%q, parse=%v) = %v (%v), want %v", tc.text, tc.parse, got, err, tc.want)
		}
	}
}

func TestSpecialIDs(t *testing.T) {
	tests := []struct {
		vocab          string
		bos, eos, eot  int32
		addBOS, addEOS bool
		eog            []int32
	}{
		{"vocab-qwen3.gguf", 151643, 151645, 151645, false, false, []int32{128247, 151643, 151645, 151662, 151663, 151664}},
		{"vocab-llama3.gguf", 128000, 128009, 128009, true, false, []int32{128001, 128008, 128009}},
		{"ggml-vocab-llama-spm.gguf", 1, 2, NoToken, true, false, []int32{2}},
	}
	for _, tc := range tests {
		t.Run(tc.vocab, func(t *testing.T) {
			tk := loadGGUF(t, "tokenizer", tc.vocab)
			if tk.BOS() != tc.bos || tk.EOS() != tc.eos || tk.EOT() != tc.eot {
				t.Errorf("BOS/EOS/EOT = %d/%d/%d, want %d/%d/%d", tk.BOS(), tk.EOS(), tk.EOT(), tc.bos, tc.eos, tc.eot)
			}
			if tk.AddBOS() != tc.addBOS || tk.AddEOS() != tc.addEOS {
				t.Errorf("AddBOS/AddEOS = %v/%v", tk.AddBOS(), tk.AddEOS())
			}
			if !slices.Equal(tk.EOGs(), tc.eog) {
				t.Errorf("EOGs = %v, want %v", tk.EOGs(), tc.eog)
			}
			for _, id := range tc.eog {
				if !tk.IsEOG(id) {
					t.Errorf("IsEOG(%d) = false", id)
				}
			}
			if tk.IsEOG(0) || tk.IsEOG(-1) {
				t.Error("IsEOG of a normal/invalid id")
			}
		})
	}
}

func TestAddSpecial(t *testing.T) {
	llama3 := loadGGUF(t, "tokenizer", "vocab-llama3.gguf")
	got, err := llama3.Encode("Hello", true, false)
	if err != nil || !equalIDs(got, []int32{128000, 9906}) {
		t.Errorf("llama3 add_special: %v %v", got, err)
	}
	qwen := loadGGUF(t, "tokenizer", "vocab-qwen3.gguf")
	got, err = qwen.Encode("Hello", true, false)
	if err != nil || !equalIDs(got, []int32{9707}) {
		t.Errorf("qwen add_special (no BOS): %v %v", got, err)
	}
	spm := loadGGUF(t, "tokenizer", "ggml-vocab-llama-spm.gguf")
	// a space prefix follows BOS and every parsed special token
	plain, _ := spm.Encode("Hello", false, false)
	got, err = spm.Encode("<s>Hello", true, true)
	if err != nil || !equalIDs(got, append([]int32{1, 1}, plain...)) {
		t.Errorf("spm <s>Hello: %v (plain %v) %v", got, plain, err)
	}
	if got, _ := spm.Encode("", true, false); !equalIDs(got, []int32{1}) {
		t.Errorf("spm empty with BOS: %v", got)
	}
	if got, _ := spm.Encode("", false, false); len(got) != 0 {
		t.Errorf("spm empty: %v", got)
	}
}

func TestTokenAccessors(t *testing.T) {
	tk := loadGGUF(t, "tokenizer", "vocab-qwen3.gguf")
	if tk.VocabSize() != 151936 {
		t.Errorf("VocabSize = %d", tk.VocabSize())
	}
	if tk.TokenText(151645) != "<|im_end|>" || tk.TokenText(-1) != "" || tk.TokenText(1<<30) != "" {
		t.Error("TokenText")
	}
	if id, ok := tk.TokenID("<|im_end|>"); !ok || id != 151645 {
		t.Error("TokenID")
	}
	if !tk.IsControl(151645) || tk.IsControl(9707) {
		t.Error("IsControl")
	}
	if tk.Kind() != KindBPE || tk.Pre() != "qwen2" {
		t.Errorf("Kind/Pre = %v/%q", tk.Kind(), tk.Pre())
	}
	if tk.Piece(1879, false) != " world" || tk.Piece(151645, false) != "" || tk.Piece(151645, true) != "<|im_end|>" {
		t.Error("Piece")
	}
}
