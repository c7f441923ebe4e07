package cuda

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/helexa/helexa/internal/humanize"
)

// ErrNoRoom is the error of a model whose weights cannot fit the GPU.
var ErrNoRoom = errors.New("not enough GPU memory")

// CheckFits is the pre-flight before a load: the weights (about the size
// of a GGUF file, or of a model directory's safetensors; types without
// kernels of their own grow to F16 on the device) plus the reserve the
// KV pool leaves must fit in free bytes of device memory.
func CheckFits(path string, free int64) error {
	size, err := weightFileBytes(path)
	if err != nil {
		return err
	}
	if need := size + reserveBytes(free); need > free {
		return fmt.Errorf("%w: the weights of %s take about %s and the GPU has %s free (%s kept for activations); use a smaller quant, free the GPU, or run on the CPU (--device cpu)",
			ErrNoRoom, filepath.Base(path), humanize.Bytes(size), humanize.Bytes(free), humanize.Bytes(reserveBytes(free)))
	}
	return nil
}

// reserveBytes is what a load keeps free for activations and scratch
// (the executor's KV pool leaves the same: a tenth, at least 512 MiB).
func reserveBytes(free int64) int64 { return max(free/10, 512<<20) }

// weightFileBytes is the size of a model file, or of the safetensors of
// a model directory.
func weightFileBytes(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	if !st.IsDir() {
		return st.Size(), nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".safetensors") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return 0, err
		}
		n += info.Size()
	}
	return n, nil
}
