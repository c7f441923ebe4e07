// Package modelfile opens a model's weights once — a GGUF file, or a
// Hugging Face directory of config.json and *.safetensors — and builds the
// architecture over them, so a loader can read the text side (tokenizer,
// chat template) from the same open file and hand the executor a loaded
// model.
package modelfile

import (
	"fmt"
	"os"

	"github.com/helexa/helexa/pkg/models/arch"
	"github.com/helexa/helexa/pkg/models/gguf"
	"github.com/helexa/helexa/pkg/models/safetensors"
)

// Model is an open model: its architecture over weights mapped from disk.
type Model struct {
	// Path is the GGUF file or the model directory.
	Path string
	// Arch is the architecture bound to the mapped weights.
	Arch *arch.Model
	// GGUF is the open GGUF file (nil for a safetensors directory): its
	// metadata holds the tokenizer and chat template.
	GGUF *gguf.File
	// HFConfig is config.json's raw bytes (nil for a GGUF file).
	HFConfig []byte
	// Safetensors is the open weights of a Hugging Face directory (nil for
	// a GGUF file).
	Safetensors *safetensors.File
	file        weightsFile
}

// weightsFile is the open file (or files) the weights are mapped from.
type weightsFile interface {
	FileSize() int64
	Close() error
}

// FileSize is the size of the weights on disk.
func (m *Model) FileSize() int64 { return m.file.FileSize() }

// Close unmaps the weights; the architecture must not be used afterwards.
func (m *Model) Close() error { return m.file.Close() }

// Open maps a GGUF file, or a Hugging Face directory's safetensors weights
// with its config.json, and builds the architecture over them. A directory
// holding a .gguf is not a Hugging Face directory: name the file.
func Open(path string) (*Model, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return openHFDir(path)
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	m, err := arch.Load(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Model{Path: path, Arch: m, GGUF: f, file: f}, nil
}

// openHFDir loads a directory holding config.json and *.safetensors
// (single file or sharded with model.safetensors.index.json).
func openHFDir(dir string) (*Model, error) {
	raw, err := safetensors.ReadSideFile(dir, "config.json")
	if err != nil {
		return nil, fmt.Errorf("model directory %s: %w (a Hugging Face model directory needs config.json beside its *.safetensors)", dir, err)
	}
	cfg, err := arch.ParseHFConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if _, err := cfg.Arch(); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	f, err := safetensors.Open(dir)
	if err != nil {
		return nil, err
	}
	m, err := arch.LoadHF(cfg, f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return &Model{Path: dir, Arch: m, HFConfig: raw, Safetensors: f, file: f}, nil
}
