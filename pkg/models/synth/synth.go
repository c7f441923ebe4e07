// Package synth writes random-weight GGUF models at the real shapes of
// popular models (Qwen3-0.6B, Llama-3.2-1B, a small Qwen3-MoE) and at the
// tiny shapes of the architecture reference tests, with a real
// tokenizer copied from a vocabulary GGUF and weights quantized by the
// project's quantizers in llama-quantize's mixes, so benchmarks of helexa
// and llama.cpp run on the same bytes without a download.
package synth

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/dtype"
	"github.com/helexa/helexa/pkg/models/gguf"
)

// Shape is a model family's hyperparameters.
type Shape struct {
	Name, Arch                            string
	Embd, Layers, Heads, KVHeads, HeadDim int
	FF                                    int // dense FFN width (0 for MoE)
	Experts, ExpertsUsed, ExpertFF        int
	SharedFF                              int  // shared expert width (qwen35moe)
	Tied                                  bool // no output.weight: the head reuses token_embd
	QKNorm                                bool
	Llama3Rope                            bool // rope_freqs.weight with llama3 scaling factors
	LongRope                              bool // rope_factors_long/short.weight (phi3 128k)
	RopeBase, Eps                         float32
	Context                               int
	// FusedQKV writes attn_qkv instead of attn_q/k/v, FusedUpGate one
	// ffn_up holding the gate and the up projection instead of ffn_gate
	// and ffn_up (phi3).
	FusedQKV, FusedUpGate bool
	// PostNorms adds post_attention_norm and post_ffw_norm (gemma3).
	PostNorms bool
	// RopeDims is rope.dimension_count when RoPE turns only part of each
	// head (default HeadDim).
	RopeDims int
	// Delta describes qwen35's gated DeltaNet layers (nil: none).
	Delta *DeltaShape
	// Uints, Floats and Strings are further <arch>.<key> metadata (sliding
	// window, RoPE scaling, soft-capping).
	Uints   map[string]int
	Floats  map[string]float32
	Strings map[string]string
	// GeneralName is general.name (default "synth <Name>"). llama.cpp
	// patches the vocabulary of a model whose name says phi3 with tokens
	// the tiny vocabulary does not have.
	GeneralName string
	// VocabFile is the GGUF, relative to the fixtures directory, whose
	// tokenizer.* keys the model gets (tokenizer/vocab-qwen3.gguf,
	// models/stories260K.gguf).
	VocabFile string
}

// fileType is the GGUF general.file_type of a --quant value.
func fileType(q string) (uint32, bool) {
	switch q {
	case "f32":
		return 0, true
	case "f16":
		return 1, true
	case "q8_0":
		return 7, true
	case "q4_k_m":
		return 15, true
	}
	return 0, false
}

// Options say what to write.
type Options struct {
	Shape Shape
	Quant string // f32, f16, q8_0, q4_k_m
	// Vocab is the open vocabulary GGUF (Shape.VocabFile).
	Vocab *gguf.File
	// Layers, when > 0, overrides the layer count; Shrink, when > 1,
	// divides the widths (hidden, FFN, heads) for quick tests.
	Layers, Shrink int
	Seed           uint64
}

// Write builds the model and writes it to path.
func Write(path string, o Options) error {
	ft, ok := fileType(o.Quant)
	if !ok {
		return fmt.Errorf("quant %q: want f32, f16, q8_0 or q4_k_m", o.Quant)
	}
	s := o.Shape
	if o.Layers > 0 {
		s.Layers = o.Layers
		if d := s.Delta; d != nil && s.Layers < d.Interval {
			short := *d
			short.Interval = s.Layers // keep one attention layer
			s.Delta = &short
		}
	}
	if o.Shrink > 1 {
		s.Embd, s.FF, s.ExpertFF = s.Embd/o.Shrink, s.FF/o.Shrink, s.ExpertFF/o.Shrink
		s.Heads, s.KVHeads = max(1, s.Heads/o.Shrink), max(1, s.KVHeads/o.Shrink)
	}
	w := gguf.NewWriter()
	vocab, err := copyTokenizer(w, o.Vocab)
	if err != nil {
		return err
	}
	metadata(w, s, ft, vocab)
	b := &builder{s: s, quant: o.Quant, w: w, rng: rand.New(rand.NewPCG(o.Seed, 0x73796e7468))}
	b.tensors(vocab)
	if b.err != nil {
		return b.err
	}
	return w.WriteFile(path)
}

// copyTokenizer copies every tokenizer.* key of the vocabulary file and
// returns the vocabulary size.
func copyTokenizer(w *gguf.Writer, v *gguf.File) (int, error) {
	if v == nil {
		return 0, fmt.Errorf("no vocabulary GGUF to take the tokenizer from")
	}
	for _, k := range v.Keys() {
		if !strings.HasPrefix(k, "tokenizer.") {
			continue
		}
		val, _ := v.Value(k)
		if err := w.SetValue(k, val); err != nil {
			return 0, fmt.Errorf("copying %s: %w", k, err)
		}
	}
	list, err := v.Strings("tokenizer.ggml.tokens")
	if err != nil || len(list) == 0 {
		return 0, fmt.Errorf("the vocabulary GGUF has no tokenizer.ggml.tokens: %v", err)
	}
	return len(list), nil
}

func metadata(w *gguf.Writer, s Shape, fileType uint32, vocab int) {
	a := s.Arch
	w.SetString("general.architecture", a)
	name := s.GeneralName
	if name == "" {
		name = "synth " + s.Name
	}
	w.SetString("general.name", name)
	w.SetUint32("general.file_type", fileType)
	u := func(k string, v int) { w.SetUint32(a+"."+k, uint32(v)) }
	u("context_length", s.Context)
	u("embedding_length", s.Embd)
	u("block_count", s.Layers)
	u("attention.head_count", s.Heads)
	u("attention.head_count_kv", s.KVHeads)
	u("attention.key_length", s.HeadDim)
	u("attention.value_length", s.HeadDim)
	u("rope.dimension_count", cmp.Or(s.RopeDims, s.HeadDim))
	u("vocab_size", vocab)
	if s.FF > 0 {
		u("feed_forward_length", s.FF)
	} else {
		u("feed_forward_length", s.ExpertFF)
	}
	if s.Experts > 0 {
		u("expert_count", s.Experts)
		u("expert_used_count", s.ExpertsUsed)
		u("expert_feed_forward_length", s.ExpertFF)
	}
	if s.SharedFF > 0 {
		u("expert_shared_feed_forward_length", s.SharedFF)
	}
	w.SetFloat32(a+".attention.layer_norm_rms_epsilon", s.Eps)
	w.SetFloat32(a+".rope.freq_base", s.RopeBase)
	if s.Delta != nil {
		deltaMetadata(w, s)
	}
	for _, k := range sortedKeys(s.Uints) {
		u(k, s.Uints[k])
	}
	for _, k := range sortedKeys(s.Floats) {
		w.SetFloat32(a+"."+k, s.Floats[k])
	}
	for _, k := range sortedKeys(s.Strings) {
		w.SetString(a+"."+k, s.Strings[k])
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := slices.Collect(maps.Keys(m))
	slices.Sort(keys)
	return keys
}

// llama3Factors are the rope_freqs of llama3 scaling (factor 32, low 1,
// high 4, original context 8192), as llama.cpp's converter writes them.
func llama3Factors(headDim int, base float32) []float32 {
	const factor, low, high, orig = 32.0, 1.0, 4.0, 8192.0
	out := make([]float32, headDim/2)
	for i := range out {
		freq := 1 / math.Pow(float64(base), float64(2*i)/float64(headDim))
		wavelen := 2 * math.Pi / freq
		switch {
		case wavelen < orig/high:
			out[i] = 1
		case wavelen > orig/low:
			out[i] = factor
		default:
			smooth := (orig/wavelen - low) / (high - low)
			out[i] = float32(1 / ((1-smooth)/factor + smooth))
		}
	}
	return out
}

// longRopeFactors are LongRoPE-like factors for n pairs: the short ones
// from 1 to 1.5, the long ones from 1 to 16, rising with the wavelength.
func longRopeFactors(n int) (long, short []float32) {
	long, short = make([]float32, n), make([]float32, n)
	for i := range long {
		f := float64(i) / float64(max(1, n-1))
		long[i] = float32(math.Pow(16, f))
		short[i] = float32(1 + 0.5*f)
	}
	return long, short
}

type builder struct {
	s     Shape
	quant string
	w     *gguf.Writer
	rng   *rand.Rand
	err   error
}

// typeFor is the tensor type of llama-quantize's mix for the quant: role
// is "embd", "out", "v", "down", "k", "o" or "" (other matrices), layer the
// block index.
func (b *builder) typeFor(role string, layer int) dtype.Type {
	switch b.quant {
	case "f32":
		return dtype.F32
	case "f16":
		return dtype.F16
	case "q8_0":
		return dtype.Q8_0
	}
	n := b.s.Layers
	moreBits := layer < n/8 || layer >= 7*n/8 || (layer-n/8)%3 == 2
	switch {
	case role == "embd" || role == "out":
		return dtype.Q6_K
	case (role == "k" || role == "v") && b.s.Experts >= 8:
		return dtype.Q8_0
	case role == "o" && b.s.Experts >= 8, role == "qkv":
		return dtype.Q5_K
	case (role == "v" || role == "down") && moreBits:
		return dtype.Q6_K
	}
	return dtype.Q4_K
}

func (b *builder) tensors(vocab int) {
	s := b.s
	qDim, kvDim := s.Heads*s.HeadDim, s.KVHeads*s.HeadDim
	b.matrix("token_embd.weight", "embd", 0, 0.1, s.Embd, vocab)
	for i := 0; i < s.Layers; i++ {
		p := fmt.Sprintf("blk.%d.", i)
		if s.Delta != nil {
			b.qwen35Layer(i, vocab)
			continue
		}
		b.norm(p+"attn_norm.weight", s.Embd)
		if s.FusedQKV {
			b.matrix(p+"attn_qkv.weight", "qkv", i, 0, s.Embd, qDim+2*kvDim)
		} else {
			b.matrix(p+"attn_q.weight", "", i, 0, s.Embd, qDim)
			b.matrix(p+"attn_k.weight", "k", i, 0, s.Embd, kvDim)
			b.matrix(p+"attn_v.weight", "v", i, 0, s.Embd, kvDim)
		}
		if s.QKNorm {
			b.norm(p+"attn_q_norm.weight", s.HeadDim)
			b.norm(p+"attn_k_norm.weight", s.HeadDim)
		}
		b.matrix(p+"attn_output.weight", "o", i, 0, qDim, s.Embd)
		if s.PostNorms {
			b.norm(p+"post_attention_norm.weight", s.Embd)
		}
		b.norm(p+"ffn_norm.weight", s.Embd)
		switch {
		case s.Experts > 0:
			b.put(p+"ffn_gate_inp.weight", dtype.F32, []int{s.Embd, s.Experts}, b.values(0, s.Embd, s.Embd*s.Experts))
			b.matrix(p+"ffn_gate_exps.weight", "", i, 0, s.Embd, s.ExpertFF, s.Experts)
			b.matrix(p+"ffn_up_exps.weight", "", i, 0, s.Embd, s.ExpertFF, s.Experts)
			b.matrix(p+"ffn_down_exps.weight", "down", i, 0, s.ExpertFF, s.Embd, s.Experts)
		case s.FusedUpGate:
			b.matrix(p+"ffn_up.weight", "", i, 0, s.Embd, 2*s.FF)
			b.matrix(p+"ffn_down.weight", "down", i, 0, s.FF, s.Embd)
		default:
			b.matrix(p+"ffn_gate.weight", "", i, 0, s.Embd, s.FF)
			b.matrix(p+"ffn_up.weight", "", i, 0, s.Embd, s.FF)
			b.matrix(p+"ffn_down.weight", "down", i, 0, s.FF, s.Embd)
		}
		if s.PostNorms {
			b.norm(p+"post_ffw_norm.weight", s.Embd)
		}
	}
	b.norm("output_norm.weight", s.Embd)
	if s.Llama3Rope {
		f := llama3Factors(s.HeadDim, s.RopeBase)
		b.put("rope_freqs.weight", dtype.F32, []int{len(f)}, f)
	}
	if s.LongRope {
		long, short := longRopeFactors(s.HeadDim / 2)
		b.put("rope_factors_long.weight", dtype.F32, []int{len(long)}, long)
		b.put("rope_factors_short.weight", dtype.F32, []int{len(short)}, short)
	}
	if !s.Tied {
		b.matrix("output.weight", "out", 0, 0.1, s.Embd, vocab)
	}
}

// values draws n normal values; std 0 means 1/sqrt(fanIn).
func (b *builder) values(std float64, fanIn, n int) []float32 {
	if std == 0 {
		std = 1 / math.Sqrt(float64(fanIn))
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(b.rng.NormFloat64() * std)
	}
	return v
}

func (b *builder) norm(name string, n int) {
	v := b.values(0.05, 1, n)
	for i := range v {
		v[i]++
	}
	b.put(name, dtype.F32, []int{n}, v)
}

func (b *builder) matrix(name, role string, layer int, std float64, dims ...int) {
	n := 1
	for _, d := range dims {
		n *= d
	}
	b.put(name, b.typeFor(role, layer), dims, b.values(std, dims[0], n))
}

func (b *builder) put(name string, t dtype.Type, dims []int, v []float32) {
	if b.err != nil {
		return
	}
	if t != dtype.F32 && t != dtype.F16 && dims[0]%t.BlockSize() != 0 {
		t = dtype.Q8_0 // a width the type's blocks do not divide (shrunk test shapes)
		if dims[0]%t.BlockSize() != 0 {
			t = dtype.F16
		}
	}
	b.err = AddTensor(b.w, name, t, dims, v)
}

// AddTensor adds a tensor of values v (dims in GGUF order) to w as type t,
// quantized by the project's quantizers; a type they cannot produce gets
// zero bytes of the right size.
func AddTensor(w *gguf.Writer, name string, t dtype.Type, dims []int, v []float32) error {
	ud := make([]uint64, len(dims))
	for i, d := range dims {
		ud[i] = uint64(d)
	}
	size, err := t.RowBytes(int64(len(v)))
	if err != nil {
		return fmt.Errorf("tensor %s: %w", name, err)
	}
	data := make([]byte, size)
	if quant.Supported(t) {
		if err := quantizeRows(t, dims[0], v, data); err != nil {
			return fmt.Errorf("tensor %s as %s: %w", name, t, err)
		}
	}
	return w.AddTensor(name, t, ud, data)
}

// quantizeRows quantizes v (rows of width values) into data, spreading the
// rows over the machine's cores; each row is quantized on its own, so the
// bytes are the same as one pass would give.
func quantizeRows(t dtype.Type, width int, v []float32, data []byte) error {
	rows := len(v) / max(width, 1)
	workers := min(runtime.GOMAXPROCS(0), rows)
	if workers <= 1 || len(v)%width != 0 {
		return quant.Quantize(t, v, data)
	}
	rowBytes, err := t.RowBytes(int64(width))
	if err != nil {
		return err
	}
	per := (rows + workers - 1) / workers
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := range workers {
		lo, hi := i*per, min((i+1)*per, rows)
		if lo >= hi {
			continue
		}
		wg.Go(func() {
			errs[i] = quant.Quantize(t, v[lo*width:hi*width], data[int64(lo)*rowBytes:int64(hi)*rowBytes])
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
