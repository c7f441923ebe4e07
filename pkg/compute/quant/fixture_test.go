package quant_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/dtype"
	"github.com/helexa/helexa/pkg/models/gguf"
)

func openModel(t *testing.T, name string) *gguf.File {
	t.Helper()
	f, err := gguf.Open(fixtures.Path(t, "models", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func tensorFloats(t *testing.T, f *gguf.File, name string) ([]float32, dtype.Type) {
	t.Helper()
	ti, ok := f.Tensor(name)
	if !ok {
		t.Fatalf("%s: no tensor %s", f.Path(), name)
	}
	out := make([]float32, ti.Elements())
	if err := quant.Dequantize(ti.Type, f.TensorData(ti), out); err != nil {
		t.Fatalf("%s %s: %v", f.Path(), name, err)
	}
	return out, ti.Type
}

func relRMS(a, ref []float32) float64 {
	var num, den float64
	for i := range a {
		d := float64(a[i]) - float64(ref[i])
		num += d * d
		den += float64(ref[i]) * float64(ref[i])
	}
	return math.Sqrt(num / den)
}

// TestDequantizeRealTensors dequantizes every weight of the llama-q files
// that llama.cpp quantized from llama-q-F32.gguf and compares it with the
// F32 original.
func TestDequantizeRealTensors(t *testing.T) {
	bound := map[dtype.Type]float64{
		dtype.F16: 1e-3, dtype.BF16: 5e-3, dtype.Q8_0: 1e-2, dtype.Q6_K: 3e-2,
		dtype.Q5_0: 6e-2, dtype.Q5_1: 6e-2, dtype.Q5_K: 6e-2,
		dtype.Q4_0: 0.12, dtype.Q4_1: 0.12, dtype.Q4_K: 0.1,
		dtype.Q3_K: 0.2, dtype.Q2_K: 0.4,
	}
	ref := openModel(t, "llama-q-F32.gguf")
	files := []string{"F16", "BF16", "Q8_0", "Q6_K", "Q5_K_M", "Q5_0", "Q5_1", "Q4_K_M", "Q4_0", "Q4_1", "Q3_K_M", "Q2_K"}
	for _, suffix := range files {
		t.Run(suffix, func(t *testing.T) {
			f := openModel(t, fmt.Sprintf("llama-q-%s.gguf", suffix))
			checked := 0
			for _, ti := range f.Tensors() {
				if ti.Type == dtype.F32 {
					continue
				}
				got, typ := tensorFloats(t, f, ti.Name)
				want, _ := tensorFloats(t, ref, ti.Name)
				if len(got) != len(want) {
					t.Fatalf("%s: %d elements, F32 file has %d", ti.Name, len(got), len(want))
				}
				e := relRMS(got, want)
				if e > bound[typ] {
					t.Errorf("%s (%s): relative RMS error vs F32 %.3g > %.3g", ti.Name, typ, e, bound[typ])
				}
				checked++
			}
			if checked == 0 {
				t.Fatal("no quantized tensors found")
			}
		})
	}
}

// TestQuantizeMatchesLlamaQuantize re-quantizes the F32 weights with the
// reference quantizers and compares the bytes with what llama-quantize wrote
// (no importance matrix, so llama.cpp used the same *_ref functions): every
// block must be byte-identical.
func TestQuantizeMatchesLlamaQuantize(t *testing.T) {
	ref := openModel(t, "llama-q-F32.gguf")
	files := []string{"F16", "BF16", "Q8_0", "Q6_K", "Q5_K_M", "Q5_0", "Q5_1", "Q4_K_M", "Q4_0", "Q4_1", "Q3_K_M", "Q2_K"}
	for _, suffix := range files {
		t.Run(suffix, func(t *testing.T) {
			f := openModel(t, fmt.Sprintf("llama-q-%s.gguf", suffix))
			for _, ti := range f.Tensors() {
				if ti.Type == dtype.F32 {
					continue
				}
				src, _ := tensorFloats(t, ref, ti.Name)
				data := f.TensorData(ti)
				mine := make([]byte, len(data))
				if err := quant.Quantize(ti.Type, src, mine); err != nil {
					t.Fatal(err)
				}
				bs := ti.Type.TypeSize()
				same := 0
				for off := 0; off < len(data); off += bs {
					if string(data[off:off+bs]) == string(mine[off:off+bs]) {
						same++
					}
				}
				if total := len(data) / bs; same != total {
					t.Errorf("%s (%s): %d of %d blocks differ from llama-quantize's", ti.Name, ti.Type, total-same, total)
				}
			}
		})
	}
}
