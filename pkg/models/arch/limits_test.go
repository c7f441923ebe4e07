package arch

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/models/gguf"
)

// TestHFConfigLimits: an out-of-range size in config.json is refused by
// ParseHFConfig, before anything is allocated from it, with an error naming
// the key, the value and the limit.
func TestHFConfigLimits(t *testing.T) {
	tests := []struct {
		key   string
		value any
		limit int
	}{
		{"num_hidden_layers", 1000000000, MaxLayers},
		{"hidden_size", 1 << 30, MaxWidth},
		{"num_attention_heads", 5000, MaxHeads},
		{"num_key_value_heads", -1, MaxHeads},
		{"head_dim", MaxWidth + 1, MaxWidth},
		{"intermediate_size", 1 << 40, MaxWidth},
		{"vocab_size", MaxVocab + 1, MaxVocab},
		{"max_position_embeddings", 1 << 30, MaxContext},
		{"num_experts", 1 << 20, MaxExperts},
		{"num_experts_per_tok", 1 << 20, MaxExperts},
		{"linear_num_value_heads", 1 << 20, MaxHeads},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			var doc map[string]any
			if err := json.Unmarshal([]byte(llamaConfig), &doc); err != nil {
				t.Fatal(err)
			}
			doc[tc.key] = tc.value
			raw, _ := json.Marshal(doc)
			for _, wrapped := range []bool{false, true} {
				in := raw
				if wrapped { // a multimodal checkpoint's text_config
					in, _ = json.Marshal(map[string]any{"architectures": []string{"LlamaForCausalLM"}, "text_config": doc})
				}
				_, err := ParseHFConfig(in)
				var le *LimitError
				if !errors.As(err, &le) || !errors.Is(err, ErrOutOfRange) {
					t.Fatalf("err = %v, want a *LimitError", err)
				}
				msg := err.Error()
				for _, want := range []string{tc.key, fmt.Sprint(tc.value), fmt.Sprint(tc.limit)} {
					if !strings.Contains(msg, want) {
						t.Errorf("error %q does not name %q", msg, want)
					}
				}
			}
		})
	}
	c, err := ParseHFConfig([]byte(`{"architectures": ["LlamaForCausalLM"], "hidden_size": 64}`))
	if err != nil {
		t.Fatalf("a partial config parses: %v", err)
	}
	if _, _, err := c.hparams(); !errors.Is(err, ErrOutOfRange) || !strings.Contains(err.Error(), "num_hidden_layers = 0") {
		t.Errorf("hparams of a config without layers: %v", err)
	}
}

// TestGGUFLimits: GGUF metadata keys have the same bounds.
func TestGGUFLimits(t *testing.T) {
	for key, limit := range map[string]int{"block_count": MaxLayers, "attention.head_count": MaxHeads, "context_length": MaxContext, "embedding_length": MaxWidth} {
		w := gguf.NewWriter()
		w.SetString("general.architecture", "llama")
		for _, k := range []string{"block_count", "attention.head_count", "context_length", "embedding_length"} {
			v := uint32(4)
			if k == key {
				v = 1000000000
			}
			w.SetUint32("llama."+k, v)
		}
		w.SetFloat32("llama.attention.layer_norm_rms_epsilon", 1e-5)
		path := filepath.Join(t.TempDir(), "m.gguf")
		if err := w.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = readHParams(&meta{f: f, arch: "llama"}, nil)
		f.Close()
		if !errors.Is(err, ErrOutOfRange) || !strings.Contains(err.Error(), "llama."+key) || !strings.Contains(err.Error(), fmt.Sprint(limit)) {
			t.Errorf("%s: err = %v", key, err)
		}
	}
}
