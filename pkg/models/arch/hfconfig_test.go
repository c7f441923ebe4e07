package arch

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/compute"
)

const llamaConfig = `{
  "architectures": ["LlamaForCausalLM"], "hidden_size": 256, "num_hidden_layers": 2,
  "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 768,
  "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "max_position_embeddings": 131072,
  "hidden_act": "silu", "tie_word_embeddings": false, "vocab_size": 512,
  "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"}
}`

func TestHFConfigHParams(t *testing.T) {
	c, err := ParseHFConfig([]byte(llamaConfig))
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Arch()
	if err != nil || a != "llama" {
		t.Fatalf("arch %q %v", a, err)
	}
	h, factors, err := c.hparams()
	if err != nil {
		t.Fatal(err)
	}
	want := HParams{NEmbd: 256, NLayer: 2, NHead: 4, NHeadKV: 2, HeadDim: 64, NRot: 64, NCtxTrain: 131072,
		Eps: 1e-5, RopeBase: 500000, RopeScale: 1}
	if h != want {
		t.Errorf("hparams %+v, want %+v", h, want)
	}
	if len(factors) != 32 || factors[0] != 1 || factors[31] != 8 {
		t.Fatalf("llama3 factors %v: want 32, from 1 (high frequencies) to 8 (low)", factors)
	}
	for i, f := range factors {
		// independent form of the llama3 rule: wavelength in the band
		// [8192/4, 8192/1] interpolates 1/factor between 1/8 and 1
		wave := 2 * math.Pi * math.Pow(500000, float64(2*i)/64)
		want := 1.0
		switch {
		case wave > 8192:
			want = 8
		case wave >= 2048:
			s := (8192/wave - 1) / 3
			want = 1 / ((1-s)/8 + s)
		}
		if math.Abs(float64(f)-want) > 1e-5*want {
			t.Errorf("factor %d = %g, want %g", i, f, want)
		}
	}
	r := ropeFor(&h, factors)
	if r.Mode != compute.RopeNeox || r.Dims != 64 || r.Base != 500000 {
		t.Errorf("rope %+v: Hugging Face weights rotate halves (NEOX)", r)
	}
}

func TestHFConfigVariants(t *testing.T) {
	tests := []struct {
		name, cfg, want string
		unsupported     bool
		scale           float32
	}{
		{"linear", `{"rope_scaling": {"type": "linear", "factor": 4}}`, "", false, 0.25},
		{"default", `{"rope_scaling": {"rope_type": "default"}}`, "", false, 1},
		{"yarn", `{"rope_scaling": {"rope_type": "yarn", "factor": 4}}`, `"yarn"`, true, 0},
		{"gelu", `{"hidden_act": "gelu"}`, "gelu", true, 0},
		{"bias", `{"attention_bias": true}`, "attention_bias", true, 0},
		{"kv heads", `{"num_key_value_heads": 3}`, "not a multiple", false, 0},
		{"no layers", `{"num_hidden_layers": 0}`, "num_hidden_layers", false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := `{"architectures": ["Qwen2ForCausalLM"], "hidden_size": 64, "num_hidden_layers": 1,
				"num_attention_heads": 4, "max_position_embeddings": 128, "rms_norm_eps": 1e-6}`
			c, err := ParseHFConfig([]byte(base))
			if err != nil {
				t.Fatal(err)
			}
			if err := jsonMerge(c, tc.cfg); err != nil {
				t.Fatal(err)
			}
			h, _, err := c.hparams()
			if tc.want == "" {
				if err != nil || h.RopeScale != tc.scale {
					t.Fatalf("scale %g err %v, want %g", h.RopeScale, err, tc.scale)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrUnsupported) != tc.unsupported {
				t.Fatalf("error %v, want %q (unsupported %v)", err, tc.want, tc.unsupported)
			}
		})
	}
}

func TestHFConfigMoE(t *testing.T) {
	c, err := ParseHFConfig([]byte(`{"architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 64, "num_hidden_layers": 1,
		"num_attention_heads": 4, "head_dim": 32, "max_position_embeddings": 128, "rms_norm_eps": 1e-6,
		"num_experts": 8, "num_experts_per_tok": 2, "norm_topk_prob": false}`))
	if err != nil {
		t.Fatal(err)
	}
	moeHParams := func() (HParams, error) {
		h, _, err := c.hparams()
		if err != nil {
			return h, err
		}
		m := &Model{HP: h}
		err = qwen3moeFamily.readHF(m, c)
		return m.HP, err
	}
	if _, err := moeHParams(); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "norm_topk_prob") {
		t.Errorf("norm_topk_prob false: %v", err)
	}
	yes := true
	c.NormTopKProb = &yes
	h, err := moeHParams()
	if err != nil || h.NExpert != 8 || h.NExpertUse != 2 || h.HeadDim != 32 {
		t.Errorf("hparams %+v, %v", h, err)
	}
	c.Architectures = []string{"MixtralForCausalLM"}
	if _, err := c.Arch(); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "Qwen3MoeForCausalLM") {
		t.Errorf("Mixtral: %v", err)
	}
}

// TestHFConfigModelType: a config without "architectures" is matched by
// its model_type; a listed but unsupported class is not.
func TestHFConfigModelType(t *testing.T) {
	tests := []struct {
		raw, want string
	}{
		{`{"model_type": "qwen3_moe"}`, "qwen3moe"},
		{`{"model_type": "llama"}`, "llama"},
		{`{"architectures": ["Qwen3ForSequenceClassification"], "model_type": "qwen3"}`, ""},
		{`{"model_type": "gpt2"}`, ""},
	}
	for _, tt := range tests {
		c, err := ParseHFConfig([]byte(tt.raw))
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Arch()
		if got != tt.want || (tt.want == "") != errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: arch %q, err %v; want %q", tt.raw, got, err, tt.want)
		}
	}
}

func jsonMerge(c *HFConfig, raw string) error { return json.Unmarshal([]byte(raw), c) }

// TestHFConfigTextConfig: a multimodal Qwen3.5 config.json is read from
// its text_config, under the top level's architectures and tied
// embeddings, with rope_theta from rope_parameters.
func TestHFConfigTextConfig(t *testing.T) {
	raw := `{"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5", "tie_word_embeddings": true,
	  "vision_config": {"hidden_size": 1152},
	  "text_config": {"model_type": "qwen3_5_text", "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 8,
	    "num_key_value_heads": 2, "head_dim": 256, "max_position_embeddings": 262144, "rms_norm_eps": 1e-06,
	    "linear_num_key_heads": 16, "linear_num_value_heads": 16, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
	    "linear_conv_kernel_dim": 4, "full_attention_interval": 4,
	    "rope_parameters": {"rope_type": "default", "rope_theta": 10000000, "partial_rotary_factor": 0.25}}}`
	c, err := ParseHFConfig([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if a, err := c.Arch(); err != nil || a != "qwen35" {
		t.Fatalf("arch %q %v", a, err)
	}
	h, _, err := c.hparams()
	if err != nil {
		t.Fatal(err)
	}
	if h.NEmbd != 1024 || h.NLayer != 24 || h.HeadDim != 256 || h.RopeBase != 1e7 || !c.TieWordEmbeddings || c.LinearNumValueHeads != 16 {
		t.Errorf("hparams %+v, config %+v", h, c)
	}
	m := &Model{HP: h, hf: c}
	if err := readQwen35HF(m, c); err != nil || m.HP.NRot != 64 || m.rope.Dims != 64 {
		t.Errorf("rotated dims %d (rope %d): %v", m.HP.NRot, m.rope.Dims, err)
	}
}
