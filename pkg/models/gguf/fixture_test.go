package gguf

import (
	"os"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/dtype"
)

func fixturePath(t testing.TB, name string) string {
	t.Helper()
	return fixtures.Path(t, "models", name)
}

func openFixture(t testing.TB, name string) *File {
	t.Helper()
	f, err := Open(fixturePath(t, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

func TestFixtureStories260KMetadata(t *testing.T) {
	f := openFixture(t, "stories260K.gguf")
	if f.Version() != 3 || f.Arch() != "llama" {
		t.Fatalf("version %d arch %q", f.Version(), f.Arch())
	}
	wantU := map[string]uint64{
		"llama.context_length":            2048,
		"llama.embedding_length":          64,
		"llama.feed_forward_length":       172,
		"llama.attention.head_count":      8,
		"llama.attention.head_count_kv":   4,
		"llama.block_count":               5,
		"tokenizer.ggml.bos_token_id":     1,
		"tokenizer.ggml.eos_token_id":     2,
		"tokenizer.ggml.padding_token_id": 0xFFFFFFFF,
	}
	for k, want := range wantU {
		if got, err := f.Uint(k); err != nil || got != want {
			t.Errorf("%s = %d (%v), want %d", k, got, err, want)
		}
	}
	if eps, err := f.Float("llama.attention.layer_norm_rms_epsilon"); err != nil || float32(eps) != 1e-5 {
		t.Errorf("rms eps %v %v", eps, err)
	}
	toks, err := f.Strings("tokenizer.ggml.tokens")
	if err != nil || len(toks) != 512 || toks[0] != "<unk>" || toks[1] != "<s>" || toks[3] != "<0x00>" {
		t.Errorf("tokens: %d %v", len(toks), err)
	}
	types, err := f.Int32s("tokenizer.ggml.token_type")
	if err != nil || len(types) != 512 || types[0] != 2 {
		t.Errorf("token types: %v", err)
	}
	scores, err := f.Float32s("tokenizer.ggml.scores")
	if err != nil || len(scores) != 512 {
		t.Errorf("scores: %v", err)
	}
	if s, _ := f.String("tokenizer.ggml.model"); s != "llama" {
		t.Errorf("tokenizer model %q", s)
	}
	if len(f.Tensors()) != 48 {
		t.Errorf("%d tensors, want 48", len(f.Tensors()))
	}
	emb, ok := f.Tensor("token_embd.weight")
	if !ok || emb.Type != dtype.F32 || emb.Dims[0] != 64 || emb.Dims[1] != 512 || len(f.TensorData(emb)) != 64*512*4 {
		t.Errorf("token_embd.weight %+v", emb)
	}
}

func TestFixtureQ4KMTensorTypes(t *testing.T) {
	f := openFixture(t, "llama-q-Q4_K_M.gguf")
	want := map[string]dtype.Type{
		"output.weight":            dtype.Q6_K,
		"token_embd.weight":        dtype.Q4_K,
		"output_norm.weight":       dtype.F32,
		"blk.0.attn_q.weight":      dtype.Q4_K,
		"blk.0.attn_v.weight":      dtype.Q4_K,
		"blk.1.attn_v.weight":      dtype.Q6_K,
		"blk.1.ffn_down.weight":    dtype.Q6_K,
		"blk.0.ffn_norm.weight":    dtype.F32,
		"blk.1.attn_output.weight": dtype.Q4_K,
	}
	for name, typ := range want {
		ti, ok := f.Tensor(name)
		if !ok {
			t.Errorf("%s missing", name)
			continue
		}
		if ti.Type != typ {
			t.Errorf("%s is %s, want %s", name, ti.Type, typ)
		}
	}
	if ft, _ := f.Uint("general.file_type"); ft != 15 {
		t.Errorf("file_type %d", ft)
	}
	st, _ := os.Stat(f.Path())
	if f.FileSize() != st.Size() {
		t.Errorf("FileSize %d, stat %d", f.FileSize(), st.Size())
	}
	var params int64
	for _, ti := range f.Tensors() {
		params += ti.Elements()
		rb, err := ti.Type.RowBytes(ti.Elements())
		if err != nil || rb != ti.Size || int64(len(f.TensorData(ti))) != ti.Size {
			t.Errorf("%s: size %d, RowBytes %d (%v)", ti.Name, ti.Size, rb, err)
		}
	}
	// 512×256 embeddings + head, 2 layers of (2×256² + 2×256×128 + 3×256×768 + 2×256) + final norm.
	wantParams := int64(2*512*256 + 2*(2*256*256+2*256*128+3*256*768+2*256) + 256)
	if params != wantParams {
		t.Errorf("parameters %d, want %d", params, wantParams)
	}
}

// TestFixturesAllOpen opens every shipped model; their tensor types must all
// be known.
func TestFixturesAllOpen(t *testing.T) {
	for _, name := range []string{
		"llama-2-tiny-random.gguf", "llama-q-BF16.gguf", "llama-q-F16.gguf", "llama-q-Q2_K.gguf",
		"llama-q-Q3_K_M.gguf", "llama-q-Q4_0.gguf", "llama-q-Q4_1.gguf", "llama-q-Q5_0.gguf",
		"llama-q-Q5_1.gguf", "llama-q-Q5_K_M.gguf", "llama-q-Q6_K.gguf", "llama-q-Q8_0.gguf",
		"qwen2-tiny-Q8_0.gguf", "qwen3-tiny-Q4_K_M.gguf", "qwen3moe-tiny-Q4_K_M.gguf",
		"ggml-vocab-llama-spm.gguf",
	} {
		f := openFixture(t, name)
		if f.Arch() == "" {
			t.Errorf("%s: no architecture", name)
		}
	}
}
