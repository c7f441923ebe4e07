package local_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/models/synth/synthtest"
)

// familyRefDir holds the llama.cpp references of the tiny family models
// (pkg/models/arch/testdata; its README says how they were made).
const familyRefDir = "../../models/arch/testdata"

// familySeed is the synth seed of every tiny family model.
const familySeed = 15

// familyChunk is the prefill chunk of the family reference runs: the
// 161-token paragraph prompt is prefilled in three passes.
const familyChunk = 64

// familyReferences are the tiny family models with llama.cpp references:
// synth shape, quant, tolerance.
var familyReferences = []struct {
	shape, quant string
	tol          refTolerance
}{
	{"phi3-tiny", "f32", tolF32},
	{"phi3-tiny", "q8_0", tolQuant},
	{"phi3-tiny", "q4_k_m", tolQuant},
	{"phi35-tiny", "f32", tolF32},
	{"phi35-tiny", "q8_0", tolQuant},
	{"phi35-tiny", "q4_k_m", tolQuant},
	{"mistral3-tiny", "f32", tolF32},
	{"mistral3-tiny", "q8_0", tolQuant},
	{"mistral3-tiny", "q4_k_m", tolQuant},
	{"gemma3-tiny", "f32", tolF32},
	{"gemma3-tiny", "q8_0", tolQuant},
	{"gemma3-tiny", "q4_k_m", tolQuant},
	{"qwen35-tiny", "f32", tolF32},
	{"qwen35-tiny", "q8_0", tolQuant},
	{"qwen35-tiny", "q4_k_m", tolQuant},
	{"qwen35moe-tiny", "f32", tolF32},
	{"qwen35moe-tiny", "q8_0", tolQuant},
	{"qwen35moe-tiny", "q4_k_m", tolQuant},
}

// writeFamilyModel regenerates a tiny family model, failing unless its
// bytes are the ones llama.cpp saw (the reference's sha256).
func writeFamilyModel(t *testing.T, shape, quant string, ref *refFile) string {
	t.Helper()
	path := synthtest.Write(t, shape, quant, familySeed)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != ref.SHA256 {
		t.Fatalf("regenerated %s has sha256 %x, the reference was made from %s", ref.Model, sum, ref.SHA256)
	}
	return path
}

// TestFamilyReference compares every tiny family model with llama.cpp:
// logits within the fixtures README's tolerances at every position of a
// prompt longer than one prefill chunk, and 32 greedy tokens.
func TestFamilyReference(t *testing.T) {
	for _, fr := range familyReferences {
		name := fr.shape + "-" + fr.quant
		t.Run(name, func(t *testing.T) {
			ref := readReference(t, filepath.Join(familyRefDir, name+".json"))
			path := writeFamilyModel(t, fr.shape, fr.quant, ref)
			checkReference(t, ref, path, fr.tol, openLocalChunked(familyChunk))
		})
	}
}

// TestFamilyReferenceTensorParallel is TestFamilyReference with the model
// split over two rank processes, for the F32 and Q8_0 models.
func TestFamilyReferenceTensorParallel(t *testing.T) {
	for _, fr := range familyReferences {
		if fr.quant == "q4_k_m" || strings.HasPrefix(fr.shape, "qwen35") { // recurrent models are not split (TestQwen35Layers)
			continue
		}
		name := fr.shape + "-" + fr.quant
		t.Run(name, func(t *testing.T) {
			ref := readReference(t, filepath.Join(familyRefDir, name+".json"))
			path := writeFamilyModel(t, fr.shape, fr.quant, ref)
			checkReference(t, ref, path, fr.tol, openTPChunked(familyChunk))
		})
	}
}
