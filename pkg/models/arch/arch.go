// Package arch owns the transformer architectures helexa runs, one file per
// family, each registered in the families table below by its GGUF
// general.architecture (and, where helexa reads Hugging Face checkpoints,
// its config.json architectures):
//
//   - llama (llama.go): Llama 2/3, TinyLlama, SmolLM, Mistral-style models.
//   - qwen2 (qwen2.go): llama with q/k/v biases and NEOX RoPE.
//   - qwen3 (qwen3.go): llama with per-head q/k RMSNorm and NEOX RoPE.
//   - qwen3moe (qwen3moe.go): qwen3 attention with routed experts.
//   - phi3 (phi3.go): fused qkv and gate+up projections.
//   - mistral3 (mistral3.go): Ministral 3 / Mistral 3 text, llama-like with
//     YaRN RoPE scaling and attention temperature tuning.
//   - gemma3 (gemma3.go): Gemma 3 text, with scaled embeddings, GeGLU,
//     post-norms, q/k norms and interleaved sliding-window layers.
//   - qwen35, qwen35moe (qwen35.go): Qwen3.5 / Qwen3.6 text, gated DeltaNet
//     layers (a recurrent state per sequence) interleaved with gated
//     attention; the MoE sibling adds a gated shared expert.
//
// A family file holds its hyperparameters, its tensor binding and its layer
// forward pass, built from the blocks written once in blocks.go (attention,
// gated MLP, norms) and moe.go (routed experts). forward.go runs the layers
// of any family over a batch against compute.Backend; shard.go splits a
// model for tensor parallelism; hfconfig.go and hfload.go read Hugging Face
// checkpoints (config.json + safetensors).
package arch

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/helexa/helexa/pkg/compute"
)

// family is one architecture: how its hyperparameters are read and its
// tensors bound to layers.
type family struct {
	name string // GGUF general.architecture
	// hfClasses are the config.json "architectures" loaded as this family
	// (none: GGUF only), hfTypes its "model_type" values (used when a
	// config lists no architectures).
	hfClasses, hfTypes []string
	rope               compute.RopeMode // RoPE of GGUF weights (Hugging Face weights rotate halves)
	// scalings are the rope.scaling.type values the family implements
	// besides linear and none.
	scalings []string
	// readGGUF reads the family's own hyperparameters (after the common
	// ones, HParams); nil when it has none.
	readGGUF func(m *Model, md *meta) error
	// readHF is readGGUF for a config.json (nil: no Hugging Face loading).
	readHF func(m *Model, c *HFConfig) error
	// hfNames are Hugging Face names of the family's layer tensors beyond
	// the llama ones; hfVector converts a vector read from a checkpoint to
	// its GGUF meaning (what llama.cpp's converter does to it).
	hfNames  map[string]string
	hfVector func(gg string, v []float32)
	// bind looks up the layers' tensors; md is the GGUF metadata (nil for
	// a Hugging Face checkpoint) for what configures the layers.
	bind func(m *Model, t *tensors, md *meta) error
}

// families is the table of supported architectures, keyed by GGUF
// general.architecture and, for Hugging Face checkpoints, by config.json
// architectures and model_type.
var families = []*family{llamaFamily, qwen2Family, qwen3Family, qwen3moeFamily, phi3Family, mistral3Family, gemma3Family, qwen35Family, qwen35moeFamily}

func familyOf(name string) *family {
	for _, f := range families {
		if f.name == name {
			return f
		}
	}
	return nil
}

// Supported lists the architectures helexa can run.
func Supported() []string {
	out := make([]string, len(families))
	for i, f := range families {
		out[i] = f.name
	}
	return out
}

// Family describes a supported architecture.
type Family struct {
	Arch string // GGUF general.architecture
	// HFClasses are the config.json architectures helexa loads as this
	// family from safetensors (empty: GGUF only), HFModelTypes the
	// config.json model_type values.
	HFClasses, HFModelTypes []string
}

// Families lists the supported architectures.
func Families() []Family {
	out := make([]Family, len(families))
	for i, f := range families {
		out[i] = Family{Arch: f.name, HFClasses: slices.Clone(f.hfClasses), HFModelTypes: slices.Clone(f.hfTypes)}
	}
	return out
}

// ErrUnsupported is wrapped by every error about a model feature helexa
// does not implement (architecture, RoPE scaling type, tensor type).
var ErrUnsupported = errors.New("unsupported model")

// UnsupportedArchError reports a general.architecture helexa cannot run.
type UnsupportedArchError struct{ Arch string }

func (e *UnsupportedArchError) Error() string {
	arch := e.Arch
	if arch == "" {
		arch = "(general.architecture missing)"
	}
	return fmt.Sprintf("unsupported architecture %q: helexa supports %s", arch, strings.Join(Supported(), ", "))
}

// Unwrap lets errors.Is(err, ErrUnsupported) match.
func (e *UnsupportedArchError) Unwrap() error { return ErrUnsupported }

// MissingKeyError reports a required metadata key that is absent or has the
// wrong type.
type MissingKeyError struct {
	Key string
	Err error
}

func (e *MissingKeyError) Error() string {
	return fmt.Sprintf("required metadata key %s: %v", e.Key, e.Err)
}

func (e *MissingKeyError) Unwrap() error { return e.Err }
