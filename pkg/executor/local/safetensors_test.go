package local_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/models/arch"
	"github.com/helexa/helexa/pkg/models/arch/archtest"
	"github.com/helexa/helexa/pkg/models/safetensors"
	"github.com/helexa/helexa/pkg/models/safetensors/sttest"
)

// convertFixture writes the Hugging Face form of a fixture GGUF into a
// temporary directory.
func convertFixture(t *testing.T, src string, o sttest.Options) string {
	t.Helper()
	dir := t.TempDir()
	if err := sttest.Convert(src, dir, o); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSafetensorsReference converts fixture GGUFs into Hugging Face
// checkpoints (llama q/k rows un-permuted, as the checkpoint llama.cpp's
// converter reads) and checks the safetensors model against llama.cpp's
// reference logits with the same rules and tolerances as TestReference.
func TestSafetensorsReference(t *testing.T) {
	tests := []struct {
		name, ref string
		o         sttest.Options
		tol       refTolerance
	}{
		{"llama-q-F32", "llama-q-F32", sttest.Options{}, tolF32},
		{"llama-q-F32-sharded", "llama-q-F32", sttest.Options{Shards: 3}, tolF32},
		{"qwen2-tiny-F32", "qwen2-tiny-F32", sttest.Options{}, tolF32},
		{"llama-q-BF16", "llama-q-BF16", sttest.Options{KeepType: true}, tolBF16},
		{"llama-q-F16", "llama-q-F16", sttest.Options{KeepType: true}, tolF16},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := convertFixture(t, fixtures.Path(t, "models", tc.ref+".gguf"), tc.o)
			checkReferenceDir(t, dir, tc.ref, tc.tol)
		})
	}
}

func checkReferenceDir(t *testing.T, dir, ref string, tol refTolerance) {
	raw, err := os.ReadFile(fixtures.Path(t, "reference", ref+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var rf refFile
	if err := json.Unmarshal(raw, &rf); err != nil {
		t.Fatalf("parse reference: %v", err)
	}
	rec := &routeRecorder{}
	ex, err := local.Load(context.Background(), dir, local.Options{LoadOptions: executor.LoadOptions{NumCtx: 512, NumBlocks: 32}, Routing: rec.hook})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	if got := ex.Info().NVocab; got != rf.NVocab {
		t.Fatalf("n_vocab %d, reference %d", got, rf.NVocab)
	}
	for i := range rf.Cases {
		c := &rf.Cases[i]
		t.Run(c.Name, func(t *testing.T) {
			rec.reset()
			cmp := &caseCheck{t: t, tol: tol, c: c, rec: rec, firstDiff: math.MaxInt}
			cmp.run(ex)
			if cmp.compared == 0 || cmp.matched == 0 {
				t.Fatalf("nothing compared (%d logits, %d greedy steps)", cmp.compared, cmp.matched)
			}
			t.Logf("max |Δlogit| %.3g over %d compared logits; greedy matched %d/%d", cmp.maxDiff, cmp.compared, cmp.matched, len(c.Greedy))
		})
	}
}

// TestSafetensorsMatchesGGUF builds a tiny F32 model of every
// architecture helexa loads from Hugging Face checkpoints, converts it, and
// checks that the safetensors model's logits equal the GGUF model's.
func TestSafetensorsMatchesGGUF(t *testing.T) {
	prompt := make([]int32, 23)
	for i := range prompt {
		prompt[i] = int32((i*17 + 3) % 64)
	}
	for _, fam := range arch.Families() {
		if len(fam.HFClasses) == 0 {
			continue
		}
		a := fam.Arch
		for _, shards := range []int{1, 2} {
			name := a
			if shards > 1 {
				name += "-sharded"
			}
			t.Run(name, func(t *testing.T) {
				src, err := archtest.Write(t.TempDir(), archtest.Config{Arch: a, Seed: 5})
				if err != nil {
					t.Fatal(err)
				}
				dir := convertFixture(t, src, sttest.Options{Shards: shards})
				opts := local.Options{LoadOptions: executor.LoadOptions{NumCtx: 64, NumBlocks: 8, Threads: 2}}
				want := prefillAll(t, loadPath(t, src, opts), 0, prompt)
				ex := loadPath(t, dir, opts)
				if info := ex.Info(); info.Arch != a || info.NVocab != 64 {
					t.Errorf("info: arch %q vocab %d", info.Arch, info.NVocab)
				}
				got := prefillAll(t, ex, 0, prompt)
				for p := range want {
					if d := maxAbsDiff(want[p], got[p]); d > 1e-4 {
						t.Errorf("position %d: safetensors logits differ from GGUF by %g", p, d)
					}
				}
			})
		}
	}
}

func loadPath(t *testing.T, path string, opts local.Options) *local.Executor {
	t.Helper()
	ex, err := local.Load(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	return ex
}

// TestSafetensorsLoadErrors: bad directories fail with errors that say
// what is wrong.
func TestSafetensorsLoadErrors(t *testing.T) {
	src, err := archtest.Write(t.TempDir(), archtest.Config{Arch: "qwen3"})
	if err != nil {
		t.Fatal(err)
	}
	editConfig := func(dir string, edit func(map[string]any)) {
		raw, _ := os.ReadFile(filepath.Join(dir, "config.json"))
		cfg := map[string]any{}
		if err := json.Unmarshal(raw, &cfg); err != nil {
			t.Fatal(err)
		}
		edit(cfg)
		raw, _ = json.Marshal(cfg)
		if err := os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		mutate  func(dir string)
		want    []string
		errorIs error
	}{
		{"unsupported architecture", func(dir string) {
			editConfig(dir, func(c map[string]any) { c["architectures"] = []string{"GPT2LMHeadModel"} })
		}, []string{`"GPT2LMHeadModel"`, "LlamaForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM", "Qwen3MoeForCausalLM"}, arch.ErrUnsupported},
		{"no config", func(dir string) { os.Remove(filepath.Join(dir, "config.json")) }, []string{"config.json"}, os.ErrNotExist},
		{"yarn rope", func(dir string) {
			editConfig(dir, func(c map[string]any) { c["rope_scaling"] = map[string]any{"rope_type": "yarn", "factor": 4} })
		}, []string{`"yarn"`}, arch.ErrUnsupported},
		{"vocab mismatch", func(dir string) {
			editConfig(dir, func(c map[string]any) { c["vocab_size"] = 65 })
		}, []string{"vocab_size 65"}, nil},
		{"missing tensor", func(dir string) { rewriteWeights(t, dir, "model.layers.1.self_attn.k_norm.weight", "") },
			[]string{"model.layers.1.self_attn.k_norm.weight", "missing"}, nil},
		{"int weight", func(dir string) { rewriteWeights(t, dir, "model.layers.0.mlp.up_proj.weight", "I32") },
			[]string{"model.layers.0.mlp.up_proj.weight", "I32"}, safetensors.ErrUnsupportedDType},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := convertFixture(t, src, sttest.Options{})
			tc.mutate(dir)
			_, err := local.Load(context.Background(), dir, local.Options{LoadOptions: executor.LoadOptions{NumCtx: 64, NumBlocks: 8}})
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if tc.errorIs != nil && !errors.Is(err, tc.errorIs) {
				t.Errorf("error %v is not %v", err, tc.errorIs)
			}
		})
	}
}

// rewriteWeights rewrites dir/model.safetensors dropping tensor name
// (dtype "") or relabelling its dtype.
func rewriteWeights(t *testing.T, dir, name, dtype string) {
	t.Helper()
	path := filepath.Join(dir, "model.safetensors")
	f, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	w := safetensors.NewWriter()
	for _, ti := range f.Tensors() {
		dt := ti.DType
		if ti.Name == name {
			if dtype == "" {
				continue
			}
			dt = dtype
		}
		if err := w.AddTensor(ti.Name, dt, ti.Shape, append([]byte(nil), f.TensorData(ti)...)); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
}

// TestSafetensorsQwen35Reference converts the tiny qwen35 model into a
// Qwen3_5ForConditionalGeneration checkpoint (text_config, value heads
// grouped by key head, norms as w of 1 + w, A_log) and checks it against
// llama.cpp's references of the GGUF.
func TestSafetensorsQwen35Reference(t *testing.T) {
	ref := readReference(t, filepath.Join(familyRefDir, "qwen35-tiny-f32.json"))
	path := writeFamilyModel(t, "qwen35-tiny", "f32", ref)
	dir := convertFixture(t, path, sttest.Options{})
	checkReference(t, ref, dir, tolF32, openLocalChunked(familyChunk))
}
