package executor

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/helexa/helexa/pkg/models/arch"
	"github.com/helexa/helexa/pkg/models/gguf"
	"github.com/helexa/helexa/pkg/models/safetensors"
)

// weightsFile is the open file (or files) a model's weights are mapped
// from.
type weightsFile interface {
	FileSize() int64
	Close() error
}

// openModel maps a GGUF file, or a Hugging Face directory's safetensors
// weights with its config.json, and builds the architecture over them.
func openModel(path string) (weightsFile, *arch.Model, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return openHFDir(path)
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, nil, err
	}
	m, err := arch.Load(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, m, nil
}

// openHFDir loads a directory holding config.json and *.safetensors
// (single file or sharded with model.safetensors.index.json).
func openHFDir(dir string) (weightsFile, *arch.Model, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, nil, fmt.Errorf("model directory %s: %w (a Hugging Face model directory needs config.json beside its *.safetensors)", dir, err)
	}
	cfg, err := arch.ParseHFConfig(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	if _, err := cfg.Arch(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	f, err := safetensors.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	m, err := arch.LoadHF(cfg, f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	return f, m, nil
}
