package arch_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/cpu"
	"github.com/helexa/helexa/pkg/dtype"
	"github.com/helexa/helexa/pkg/models/arch"
	"github.com/helexa/helexa/pkg/models/arch/archtest"
	"github.com/helexa/helexa/pkg/models/gguf"
)

func load(t *testing.T, c archtest.Config) (*arch.Model, error) {
	t.Helper()
	path, err := archtest.Write(t.TempDir(), c)
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return arch.Load(f)
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name    string
		cfg     archtest.Config
		want    []string // substrings of the error
		wantErr error
	}{
		{"unsupported arch", archtest.Config{Arch: "gpt2"},
			[]string{`"gpt2"`, "llama, qwen2, qwen3, qwen3moe"}, arch.ErrUnsupported},
		{"no arch", archtest.Config{SkipKeys: []string{"general.architecture"}},
			[]string{"general.architecture", "llama, qwen2, qwen3, qwen3moe"}, arch.ErrUnsupported},
		{"missing block_count", archtest.Config{SkipKeys: []string{"llama.block_count"}},
			[]string{"llama.block_count"}, nil},
		{"missing rms eps", archtest.Config{Arch: "qwen2", SkipKeys: []string{"qwen2.attention.layer_norm_rms_epsilon"}},
			[]string{"qwen2.attention.layer_norm_rms_epsilon"}, nil},
		{"missing expert count", archtest.Config{Arch: "qwen3moe", SkipKeys: []string{"qwen3moe.expert_used_count"}},
			[]string{"qwen3moe.expert_used_count"}, nil},
		{"unsupported tensor type", archtest.Config{TensorTypes: map[string]dtype.Type{"blk.1.attn_q.weight": dtype.I32}},
			[]string{"blk.1.attn_q.weight", "I32"}, arch.ErrUnsupported},
		{"activation type as weight", archtest.Config{Embd: 256, TensorTypes: map[string]dtype.Type{"blk.0.ffn_up.weight": dtype.Q8_K}},
			[]string{"blk.0.ffn_up.weight", "Q8_K"}, arch.ErrUnsupported},
		{"known layout without a kernel", archtest.Config{Embd: 256, TensorTypes: map[string]dtype.Type{"blk.0.attn_v.weight": dtype.IQ4_XS}},
			[]string{"blk.0.attn_v.weight", "IQ4_XS", "Q4_K"}, arch.ErrUnsupported},
		{"missing tensor", archtest.Config{Arch: "qwen3", SkipTensors: []string{"blk.0.attn_k_norm.weight"}},
			[]string{"blk.0.attn_k_norm.weight", "missing"}, nil},
		{"yarn scaling", archtest.Config{ExtraKeys: map[string]string{"llama.rope.scaling.type": "yarn"}},
			[]string{"llama.rope.scaling.type", "yarn"}, arch.ErrUnsupported},
		{"gemma3 without a post-norm", archtest.Config{Arch: "gemma3", SkipTensors: []string{"blk.1.post_ffw_norm.weight"}},
			[]string{"blk.1.post_ffw_norm.weight", "missing"}, nil},
		{"phi3 without attn_qkv", archtest.Config{Arch: "phi3", SkipTensors: []string{"blk.0.attn_qkv.weight"}},
			[]string{"blk.0.attn_q.weight", "missing"}, nil},
		{"mistral3 longrope", archtest.Config{Arch: "mistral3", ExtraKeys: map[string]string{"mistral3.rope.scaling.type": "longrope"}},
			[]string{"mistral3.rope.scaling.type", "linear, none and yarn"}, arch.ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, tt.cfg)
			if err == nil {
				t.Fatal("loaded without error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %q is not %v", err, tt.wantErr)
			}
		})
	}
}

// TestLoadVocabOnly: a GGUF with metadata but no tensors (llama.cpp's
// ggml-vocab-*.gguf files) says so instead of naming the first missing
// tensor.
func TestLoadVocabOnly(t *testing.T) {
	w := gguf.NewWriter()
	w.SetString("general.architecture", "llama")
	w.SetUint32("llama.block_count", 2)
	w.SetStrings("tokenizer.ggml.tokens", []string{"a", "b"})
	path := filepath.Join(t.TempDir(), "vocab.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = arch.Load(f)
	if err == nil || !strings.Contains(err.Error(), "no tensors") || !strings.Contains(err.Error(), "vocabulary-only") {
		t.Fatalf("err = %v, want it to say the file has no tensors", err)
	}
}

func TestLoadHParams(t *testing.T) {
	tests := []struct {
		cfg  archtest.Config
		want arch.HParams
	}{
		{archtest.Config{Arch: "llama", Vocab: 40},
			arch.HParams{NVocab: 40, NEmbd: 64, NLayer: 2, NHead: 4, NHeadKV: 2, HeadDim: 16, NCtxTrain: 256,
				Eps: 1e-5, RopeBase: 10000, RopeScale: 1, NRot: 16}},
		{archtest.Config{Arch: "qwen3moe", Experts: 4, ExpertsUsed: 2},
			arch.HParams{NVocab: 64, NEmbd: 64, NLayer: 2, NHead: 4, NHeadKV: 2, HeadDim: 16, NCtxTrain: 256,
				NExpert: 4, NExpertUse: 2, Eps: 1e-5, RopeBase: 10000, RopeScale: 1, NRot: 16}},
	}
	for _, tt := range tests {
		t.Run(tt.cfg.Arch, func(t *testing.T) {
			m, err := load(t, tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if m.HP != tt.want {
				t.Errorf("hparams %+v, want %+v", m.HP, tt.want)
			}
		})
	}
}

// TestForwardBatchIndependence runs two sequences in one pass and each
// alone, for every architecture: the logits must be identical.
func TestForwardBatchIndependence(t *testing.T) {
	for _, a := range arch.Supported() {
		t.Run(a, func(t *testing.T) {
			m, be := preparedQ8(t, a)
			kv := cachesFor(t, m, be, 4, 8)
			rowsOf := func(o *arch.Output) [][]float32 { return logitRows(t, m, be, o) }
			seqA, seqB := []int32{1, 5, 9, 13, 2}, []int32{7, 3, 3}
			single := func(tokens []int32, blocks []int32) []float32 {
				b := withStates(t, m, be, batchOf(spanTokens{tokens, blocks}))
				out, err := m.Forward(be, kv, b, &arch.Scratch{}, nil)
				if err != nil {
					t.Fatal(err)
				}
				return rowsOf(out)[0]
			}
			wantA, wantB := single(seqA, []int32{0}), single(seqB, []int32{1})
			out, err := m.Forward(be, kv, withStates(t, m, be, batchOf(spanTokens{seqA, []int32{2}}, spanTokens{seqB, []int32{3}})), &arch.Scratch{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			both := rowsOf(out)
			if !equal(both[0], wantA) || !equal(both[1], wantB) {
				t.Error("batched logits differ from single-sequence logits")
			}
		})
	}
}

// TestDecodeStepBatchIndependence: a decode step of one sequence gives
// the logits the same step gives beside another sequence's, bit for bit.
func TestDecodeStepBatchIndependence(t *testing.T) {
	for _, a := range arch.Supported() {
		t.Run(a, func(t *testing.T) {
			m, be := preparedQ8(t, a)
			if m.Recurrent() {
				t.Skip("a recurrent state advances with each step: the step cannot run twice")
			}
			kv, s := cachesFor(t, m, be, 4, 8), &arch.Scratch{}
			logits := func(b *arch.Batch) [][]float32 {
				out, err := m.Forward(be, kv, withStates(t, m, be, b), s, nil)
				if err != nil {
					t.Fatal(err)
				}
				return logitRows(t, m, be, out)
			}
			logits(batchOf(spanTokens{[]int32{1, 5, 9, 13}, []int32{0}}))
			logits(batchOf(spanTokens{[]int32{7, 3, 3}, []int32{1}}))
			stepA, stepB := decodeStep{2, 4, []int32{0}}, decodeStep{11, 3, []int32{1}}
			alone := logits(stepsOf(stepA))[0]
			if both := logits(stepsOf(stepA, stepB)); !equal(both[0], alone) {
				t.Error("a decode step's logits differ beside another sequence's step")
			}
		})
	}
}

// TestPairedExpertsMatchPerExpert: qwen3moe's routed experts give the same
// logits, bit for bit, run in two passes for all of them (a backend with
// MatMulPairs, up to pairedRows rows) and expert by expert (a backend
// without it), for a batch of two sequences and for a decode step.
func TestPairedExpertsMatchPerExpert(t *testing.T) {
	m, be := preparedQ8(t, "qwen3moe")
	perExpert := struct{ compute.Backend }{be}
	if _, ok := compute.Backend(perExpert).(compute.PairedMatMulBackend); ok {
		t.Fatal("the per-expert backend has MatMulPairs")
	}
	for _, tc := range []struct {
		name string
		b    func() *arch.Batch
	}{
		{"two sequences", func() *arch.Batch {
			return batchOf(spanTokens{[]int32{1, 5, 9, 13, 2}, []int32{0}}, spanTokens{[]int32{7, 3, 3}, []int32{1}})
		}},
		{"decode step", func() *arch.Batch { return batchOf(spanTokens{[]int32{4}, []int32{0}}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got [2][][]float32
			for i, b := range []compute.Backend{be, perExpert} {
				out, err := m.Forward(b, cachesFor(t, m, be, 4, 8), tc.b(), &arch.Scratch{}, nil)
				if err != nil {
					t.Fatal(err)
				}
				got[i] = logitRows(t, m, be, out)
			}
			for r := range got[0] {
				if !equal(got[0][r], got[1][r]) {
					t.Errorf("row %d: the paired experts' logits differ from expert by expert", r)
				}
			}
		})
	}
}

// decodeStep is one sequence's next token at its position.
type decodeStep struct {
	token, pos int32
	blocks     []int32
}

// stepsOf builds a batch of decode steps asking for every row's logits.
func stepsOf(steps ...decodeStep) *arch.Batch {
	b := &arch.Batch{}
	for i, s := range steps {
		b.Spans = append(b.Spans, compute.SeqSpan{Row: i, N: 1, Pos: int(s.pos), Blocks: s.blocks})
		b.Tokens, b.Pos, b.LogitRows = append(b.Tokens, s.token), append(b.Pos, s.pos), append(b.LogitRows, i)
	}
	return b
}

// preparedQ8 is a random-weight Q8_0 model of architecture a, prepared
// for a two-thread CPU backend that the test closes.
func preparedQ8(t *testing.T, a string) (*arch.Model, *cpu.Backend) {
	t.Helper()
	m, err := load(t, archtest.Config{Arch: a, Type: dtype.Q8_0})
	if err != nil {
		t.Fatal(err)
	}
	be := cpu.New(2)
	t.Cleanup(func() { be.Close() })
	if err := m.Prepare(be); err != nil {
		t.Fatal(err)
	}
	return m, be
}

// logitRows reads every row of a pass's logits.
func logitRows(t *testing.T, m *arch.Model, be compute.Backend, o *arch.Output) [][]float32 {
	t.Helper()
	var rows [][]float32
	for r := range o.Logits.Rows() {
		row := make([]float32, m.HP.NVocab)
		if err := be.ReadRow(o.Logits, r, row); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	return rows
}

type spanTokens struct{ tokens, blocks []int32 }

// cachesFor allocates the model's KV stores: the full one, and a window
// store of as many blocks (the spans share their tables) when the model has
// windowed layers.
func cachesFor(t *testing.T, m *arch.Model, be compute.Backend, blocks, blockSize int) arch.Caches {
	t.Helper()
	var c arch.Caches
	var err error
	if c.Full, err = be.NewKV(compute.KVShape{Layers: m.HP.KVLayers(), NumBlocks: blocks, BlockSize: blockSize, KVDim: m.HP.KVDim()}); err != nil {
		t.Fatal(err)
	}
	if m.HP.NWinLayer > 0 {
		if c.Window, err = be.NewKV(compute.KVShape{Layers: m.HP.NWinLayer, NumBlocks: blocks, BlockSize: blockSize, KVDim: m.HP.KVDim()}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// withStates gives every sequence of b a fresh recurrent state when the
// model has recurrent layers, and window spans (the same block tables) when
// it has windowed ones.
func withStates(t *testing.T, m *arch.Model, be compute.Backend, b *arch.Batch) *arch.Batch {
	t.Helper()
	if m.HP.NWinLayer > 0 {
		b.WinSpans = b.Spans
	}
	for range b.Spans {
		if !m.Recurrent() {
			break
		}
		s, err := m.NewState(be)
		if err != nil {
			t.Fatal(err)
		}
		b.States = append(b.States, s)
	}
	return b
}

// batchOf builds a batch asking for each sequence's last logits.
func batchOf(seqs ...spanTokens) *arch.Batch {
	b := &arch.Batch{}
	for _, s := range seqs {
		row := len(b.Tokens)
		b.Spans = append(b.Spans, compute.SeqSpan{Row: row, N: len(s.tokens), Blocks: s.blocks})
		for i, tok := range s.tokens {
			b.Tokens = append(b.Tokens, tok)
			b.Pos = append(b.Pos, int32(i))
		}
		b.LogitRows = append(b.LogitRows, row+len(s.tokens)-1)
	}
	return b
}

func equal(a, b []float32) bool {
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

// TestRopeScalingKeys reads the RoPE scaling metadata as llama.cpp does:
// rope.scaling.factor (or the older rope.scale_linear) divides the
// frequencies unless rope.scaling.type is none, and rope_freqs.weight
// (llama3) becomes the per-pair frequency factors.
func TestRopeScalingKeys(t *testing.T) {
	freqs := []float32{1, 1, 2, 2, 4, 4, 8, 8} // head dim 16 → 8 pairs
	tests := []struct {
		name    string
		cfg     archtest.Config
		scale   float32
		factors []float32
		wantErr []string // substrings of the load error; nil = loads
	}{
		{"no scaling keys", archtest.Config{}, 1, nil, nil},
		{"linear factor 4", archtest.Config{ExtraKeys: map[string]string{"llama.rope.scaling.type": "linear"},
			ExtraFloats: map[string]float32{"llama.rope.scaling.factor": 4}}, 0.25, nil, nil},
		{"factor without type is linear", archtest.Config{
			ExtraFloats: map[string]float32{"llama.rope.scaling.factor": 2}}, 0.5, nil, nil},
		{"old rope.scale_linear key", archtest.Config{
			ExtraFloats: map[string]float32{"llama.rope.scale_linear": 8}}, 0.125, nil, nil},
		{"type none ignores the factor", archtest.Config{ExtraKeys: map[string]string{"llama.rope.scaling.type": "none"},
			ExtraFloats: map[string]float32{"llama.rope.scaling.factor": 4}}, 1, nil, nil},
		{"qwen2 linear", archtest.Config{Arch: "qwen2",
			ExtraFloats: map[string]float32{"qwen2.rope.scaling.factor": 4}}, 0.25, nil, nil},
		{"llama3 rope_freqs", archtest.Config{RopeFreqs: freqs}, 1, freqs, nil},
		{"negative factor", archtest.Config{
			ExtraFloats: map[string]float32{"llama.rope.scaling.factor": -2}}, 0, nil, []string{"llama.rope.scaling.factor", "negative"}},
		{"rope_freqs of the wrong size", archtest.Config{RopeFreqs: freqs[:4]}, 0, nil, []string{"rope_freqs.weight", "shape"}},
		{"longrope", archtest.Config{ExtraKeys: map[string]string{"llama.rope.scaling.type": "longrope"}},
			0, nil, []string{"llama.rope.scaling.type", "longrope", "linear and none"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := load(t, tt.cfg)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatal("loaded without error")
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r := m.Rope()
			if m.HP.RopeScale != tt.scale || r.FreqScale != tt.scale {
				t.Errorf("freq scale: hparams %g, rope %g, want %g", m.HP.RopeScale, r.FreqScale, tt.scale)
			}
			if !equal(r.FreqFactors, tt.factors) {
				t.Errorf("freq factors %v, want %v", r.FreqFactors, tt.factors)
			}
		})
	}
}
