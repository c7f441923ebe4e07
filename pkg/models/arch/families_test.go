package arch

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/models/arch/archtest"
	"github.com/helexa/helexa/pkg/models/gguf"
	"github.com/helexa/helexa/pkg/models/synth/synthtest"
)

func loadTiny(t *testing.T, c archtest.Config) *Model {
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
	m, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestGemma3Layers: sliding-window layers get the window and the local
// RoPE (base 10000, unscaled), every pattern-th layer is global with the
// model's RoPE; the FFNs are GeGLU; embeddings are scaled, logits
// soft-capped.
func TestGemma3Layers(t *testing.T) {
	m := loadTiny(t, archtest.Config{Arch: "gemma3", Layers: 4, ExtraFloats: map[string]float32{"gemma3.rope.scaling.factor": 8}})
	tests := []struct {
		layer, window int
		base, scale   float32
	}{{0, 4, 10000, 1}, {1, 0, 10000, 0.125}, {2, 4, 10000, 1}, {3, 0, 10000, 0.125}}
	for _, tt := range tests {
		l := m.layers[tt.layer].(*gemma3Layer)
		a := l.attn
		if !l.mlp.gelu {
			t.Errorf("layer %d: the FFN is not GeGLU", tt.layer)
		}
		if a.window != tt.window || a.rope.Base != tt.base || a.rope.FreqScale != tt.scale {
			t.Errorf("layer %d: window %d, rope base %g scale %g; want %d, %g, %g", tt.layer, a.window, a.rope.Base, a.rope.FreqScale, tt.window, tt.base, tt.scale)
		}
		if a.scale != 0.25 { // 1/sqrt(head_dim 16)
			t.Errorf("layer %d: score scale %g, want 0.25", tt.layer, a.scale)
		}
	}
	if m.embdScale != 8 || m.softcap != 30 {
		t.Errorf("embedding scale %g, softcap %g", m.embdScale, m.softcap)
	}
}

// TestMistral3Yarn: YaRN becomes per-pair frequency factors (1 for the
// extrapolated high frequencies, the full factor for the interpolated low
// ones) and a score scale; temperature tuning uses the original context.
func TestMistral3Yarn(t *testing.T) {
	m := loadTiny(t, archtest.Config{Arch: "mistral3", ExtraKeys: map[string]string{"mistral3.rope.scaling.type": "yarn"},
		ExtraFloats: map[string]float32{"mistral3.rope.scaling.factor": 16, "mistral3.attention.temperature_scale": 0.1}})
	r := m.Rope()
	if r.FreqScale != 1 || len(r.FreqFactors) != 8 || r.FreqFactors[0] != 1 || math.Abs(float64(r.FreqFactors[7]-16)) > 1e-5 {
		t.Fatalf("rope %+v", r)
	}
	a := m.layers[0].(*llamaLayer).attn
	mscale := 1 + 0.1*math.Log(16) // no yarn_log_multiplier: q and k scaled by get_mscale(16)
	if want := 0.25 * mscale * mscale; math.Abs(float64(a.scale)-want) > 1e-6 {
		t.Errorf("score scale %g, want %g", a.scale, want)
	}
	if a.temp == nil || a.temp.scale != 0.1 || a.temp.floor != 256 {
		t.Errorf("temperature %+v, want scale 0.1 over the 256-position context", a.temp)
	}
}

// TestPhi3Fused: the fused projections are viewed as their parts.
func TestPhi3Fused(t *testing.T) {
	m := loadTiny(t, archtest.Config{Arch: "phi3"})
	l := m.layers[1].(*llamaLayer)
	mlp := l.ffn.(*gatedMLP)
	if l.attn.wq.Rows() != 64 || l.attn.wk.Rows() != 32 || l.attn.wv.Rows() != 32 {
		t.Errorf("q/k/v rows %d/%d/%d, want 64/32/32", l.attn.wq.Rows(), l.attn.wk.Rows(), l.attn.wv.Rows())
	}
	if !follows(l.attn.wq.Data, l.attn.wk.Data) || !follows(l.attn.wk.Data, l.attn.wv.Data) || !follows(mlp.gate.Data, mlp.up.Data) {
		t.Error("the parts do not view the fused tensors in order (q, k, v; gate, up)")
	}
	if mlp.gate.Rows() != 96 || mlp.down.Cols() != 96 {
		t.Errorf("ffn width %d/%d, want 96", mlp.gate.Rows(), mlp.down.Cols())
	}
}

// follows reports whether b starts where a ends in the same memory.
func follows(a, b []byte) bool {
	return cap(a) > len(a) && len(b) > 0 && &a[:len(a)+1][len(a)] == &b[0]
}

// TestQwen35Layers: DeltaNet and gated attention layers alternate as
// full_attention_interval says, the attention layers number the KV cache's
// layers, multi-token-prediction layers are dropped, the state is sized
// from the ssm keys, and tensor parallelism is refused.
func TestQwen35Layers(t *testing.T) {
	m := loadTiny(t, archtest.Config{Arch: "qwen35", Layers: 5, ExtraUints: map[string]int{"qwen35.nextn_predict_layers": 1}})
	if m.HP.NLayer != 4 || len(m.layers) != 4 || m.HP.KVLayers() != 2 || !m.Recurrent() {
		t.Fatalf("%d layers (%d bound), %d KV layers, recurrent %v", m.HP.NLayer, len(m.layers), m.HP.KVLayers(), m.Recurrent())
	}
	for i, want := range []int{0, 0, 1, 1} { // recurrent index, or KV index
		switch l := m.layers[i].(type) {
		case *deltaLayer:
			if i%2 != 0 || l.rl != want || l.dn.KHeads != 2 || l.dn.VHeads != 4 || l.dn.Dim != 8 || len(l.conv.Data) != 4*64 {
				t.Errorf("layer %d: DeltaNet %d, %+v", i, l.rl, l.dn)
			}
		case *gatedAttnLayer:
			if i%2 != 1 || l.kvl != want || l.attn.wq.Rows() != 2*64 {
				t.Errorf("layer %d: attention over KV layer %d, q rows %d", i, l.kvl, l.attn.wq.Rows())
			}
		}
	}
	if got, want := m.StateBytes(), int64(2*(3*64+4*8*8)*4); got != want {
		t.Errorf("state bytes %d, want %d", got, want)
	}
	if err := m.CheckTP(2); err == nil || !strings.Contains(err.Error(), "recurrent") {
		t.Errorf("tp 2: %v, want a refusal naming the recurrent layers", err)
	}
	if !slices.Equal(m.TPSizes(8), []int{1}) {
		t.Errorf("tp sizes %v", m.TPSizes(8))
	}
}

// TestQwen35MoEFFN: qwen35moe layers run routed experts beside a shared
// expert gated by a one-row matmul.
func TestQwen35MoEFFN(t *testing.T) {
	m := loadTiny(t, archtest.Config{Arch: "qwen35moe"})
	for i, l := range m.layers {
		var f ffn
		switch l := l.(type) {
		case *deltaLayer:
			f = l.ffn
		case *gatedAttnLayer:
			f = l.ffn
		}
		s, ok := f.(*sharedMoE)
		if !ok || s.gate.Rows() != 1 || s.gate.Cols() != 64 || s.shared.down == nil || s.gateExps == nil || m.HP.NExpert != 4 {
			t.Fatalf("layer %d: ffn %T", i, f)
		}
	}
	if !slices.Equal(m.TPSizes(8), []int{1}) {
		t.Errorf("tp sizes %v", m.TPSizes(8))
	}
}

// TestPhi3LongRope: the long factors apply above the original context,
// the short ones up to it, and the attention factor scales the scores.
func TestPhi3LongRope(t *testing.T) {
	path := synthtest.Write(t, "phi35-tiny", "f32", 0)
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		ctx  int
		last float32 // the last pair's factor
	}{{128, 1.5}, {129, 16}, {4096, 16}, {64, 1.5}} {
		m.SetContext(tt.ctx)
		if got := m.Rope().FreqFactors[31]; math.Abs(float64(got-tt.last)) > 1e-4 {
			t.Errorf("context %d: last factor %g, want %g", tt.ctx, got, tt.last)
		}
	}
	attn := 1.2535664 // rope.scaling.attn_factor
	if got, want := m.layers[0].(*llamaLayer).attn.scale, attn*attn/8; math.Abs(float64(got)-want) > 1e-5 {
		t.Errorf("score scale %g, want %g", got, want)
	}
}

// TestQwen35RecurrentLayerFlags: attention.recurrent_layers, when present,
// says which layers attend (here layer 0, against the interval's layer 1).
func TestQwen35RecurrentLayerFlags(t *testing.T) {
	path, err := archtest.Write(t.TempDir(), archtest.Config{Arch: "qwen35", Layers: 2})
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	md := &meta{f: f, arch: "qwen35"}
	if types, err := recurrentLayers(md, 2); err != nil || types != nil {
		t.Fatalf("no flags: %v %v", types, err)
	}
	w := gguf.NewWriter()
	w.SetValue("qwen35.attention.recurrent_layers", gguf.Value{Type: gguf.TypeArray, Elem: gguf.TypeBool, V: []any{false, true}})
	p2 := filepath.Join(t.TempDir(), "flags.gguf")
	if err := w.WriteFile(p2); err != nil {
		t.Fatal(err)
	}
	g, err := gguf.Open(p2)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	types, err := recurrentLayers(&meta{f: g, arch: "qwen35"}, 2)
	if err != nil || !slices.Equal(types, []string{"full_attention", "linear_attention"}) {
		t.Errorf("types %v, %v", types, err)
	}
	if _, err := recurrentLayers(&meta{f: g, arch: "qwen35"}, 3); err == nil {
		t.Error("3 layers with 2 flags accepted")
	}
}
