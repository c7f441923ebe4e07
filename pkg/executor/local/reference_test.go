package local_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
)

// refTolerance is the fixtures README's table: max |Δlogit| and the top-1
// margin above which helexa must agree with llama.cpp.
type refTolerance struct{ logit, margin float64 }

var (
	tolF32   = refTolerance{1e-3, 1e-3}
	tolF16   = refTolerance{5e-2, 0.05}
	tolBF16  = refTolerance{0.1, 0.1}
	tolQuant = refTolerance{0.4, 0.25}
)

// moeGap is the README's bound on llama.cpp's 2nd-3rd router probability
// gap at the first routing difference.
const moeGap = 0.05

var referenceModels = map[string]refTolerance{
	"stories260K":          tolF32,
	"llama-q-F32":          tolF32,
	"qwen2-tiny-F32":       tolF32,
	"llama-2-tiny-random":  tolF16,
	"llama-q-F16":          tolF16,
	"llama-q-BF16":         tolBF16,
	"llama-q-Q8_0":         tolQuant,
	"llama-q-Q4_0":         tolQuant,
	"llama-q-Q4_1":         tolQuant,
	"llama-q-Q5_0":         tolQuant,
	"llama-q-Q5_1":         tolQuant,
	"llama-q-Q2_K":         tolQuant,
	"llama-q-Q3_K_M":       tolQuant,
	"llama-q-Q4_K_M":       tolQuant,
	"llama-q-Q5_K_M":       tolQuant,
	"llama-q-Q6_K":         tolQuant,
	"qwen2-tiny-Q8_0":      tolQuant,
	"qwen3-tiny-Q8_0":      tolQuant,
	"qwen3-tiny-Q4_K_M":    tolQuant,
	"qwen3moe-tiny-Q4_K_M": tolQuant,
}

type refPair [2]float64 // [id, logit]

type refRoute struct {
	Experts []int32   `json:"experts"`
	Probs   []float32 `json:"probs"`
}

type refCase struct {
	Name       string      `json:"name"`
	Tokens     []int32     `json:"tokens"`
	TopFirst   int         `json:"top_logits_first_position"`
	Top        [][]refPair `json:"top_logits_per_position"`
	LastLogits []float32   `json:"last_logits"`
	Greedy     []struct {
		Token int32     `json:"token"`
		Top5  []refPair `json:"top5"`
	} `json:"greedy"`
	MoE *struct {
		Prompt    [][]*refRoute `json:"prompt"`
		GreedyFed [][]*refRoute `json:"greedy_fed"`
	} `json:"moe_routing"`
}

type refFile struct {
	Model  string    `json:"model"`
	SHA256 string    `json:"model_sha256"`
	NVocab int       `json:"n_vocab"`
	Cases  []refCase `json:"cases"`
}

// TestReferenceCoverage makes sure every reference file is in the table.
func TestReferenceCoverage(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixtures.Dir(t), "reference", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no reference files: %v", err)
	}
	for _, f := range files {
		stem := strings.TrimSuffix(filepath.Base(f), ".json")
		if _, ok := referenceModels[stem]; !ok {
			t.Errorf("reference %s has no entry in referenceModels", stem)
		}
	}
}

// TestReference compares helexa's logits and greedy continuations with
// llama.cpp's for every fixture model and prompt.
func TestReference(t *testing.T) {
	names := make([]string, 0, len(referenceModels))
	for n := range referenceModels {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) { checkReferenceModel(t, name, referenceModels[name], openLocal) })
	}
}

// refOpener loads a fixture model for the reference comparison; rec, when
// the executor can report MoE routing, records it.
type refOpener func(t *testing.T, path string) (executor.Executor, *routeRecorder)

// openLocal runs the model in-process, recording MoE routing.
func openLocal(t *testing.T, path string) (executor.Executor, *routeRecorder) {
	return openLocalChunked(0)(t, path)
}

// openLocalChunked is openLocal prefilling at most chunk tokens per pass
// (0: the default).
func openLocalChunked(chunk int) refOpener {
	return func(t *testing.T, path string) (executor.Executor, *routeRecorder) {
		rec := &routeRecorder{}
		ex, err := local.Load(context.Background(), path,
			local.Options{LoadOptions: executor.LoadOptions{NumCtx: refNumCtx, NumBlocks: refNumBlocks, Parallel: 1, ChunkSize: chunk}, Routing: rec.hook})
		if err != nil {
			t.Fatal(err)
		}
		return ex, rec
	}
}

// The KV pool every reference run uses. Parallel 1 makes a windowed
// model's sliding-window store hold one sequence's window and no more, so
// the session reuses window blocks as it advances (the scheduler frees
// and reallocates them the same way).
const refNumCtx, refNumBlocks = 512, 32

func checkReferenceModel(t *testing.T, name string, tol refTolerance, open refOpener) {
	ref := readReference(t, fixtures.Path(t, "reference", name+".json"))
	checkReference(t, ref, fixtures.Path(t, "models", name+".gguf"), tol, open)
}

func readReference(t *testing.T, path string) *refFile {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ref refFile
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatalf("parse reference %s: %v", path, err)
	}
	return &ref
}

// checkReference compares the model at modelPath with the reference.
func checkReference(t *testing.T, ref *refFile, modelPath string, tol refTolerance, open refOpener) {
	ex, rec := open(t, modelPath)
	defer ex.Close()
	if got := ex.Info().NVocab; got != ref.NVocab {
		t.Fatalf("n_vocab %d, reference %d", got, ref.NVocab)
	}
	for i := range ref.Cases {
		c := &ref.Cases[i]
		t.Run(c.Name, func(t *testing.T) {
			if rec != nil {
				rec.reset()
			}
			cmp := &caseCheck{t: t, tol: tol, c: c, rec: rec, firstDiff: math.MaxInt}
			cmp.run(ex)
			t.Logf("max |Δlogit| %.3g over %d compared logits; greedy matched %d/%d (%d near-ties followed llama.cpp); %d routing entries compared, first difference at %s",
				cmp.maxDiff, cmp.compared, cmp.matched, len(c.Greedy), cmp.forced, cmp.routes, posString(cmp.firstDiff))
		})
	}
}

func posString(p int) string {
	if p == math.MaxInt {
		return "none"
	}
	return "position " + strconv.Itoa(p)
}
