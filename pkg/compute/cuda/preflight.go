package cuda

import (
	"errors"
	"fmt"

	"github.com/helexa/helexa/internal/humanize"
	"github.com/helexa/helexa/pkg/compute"
)

// ErrNoRoom is the error of a model whose weights cannot fit the GPU.
var ErrNoRoom = errors.New("not enough GPU memory")

var _ compute.FitBackend = (*Backend)(nil)

// CheckFits implements compute.FitBackend, the pre-flight before a load:
// the weights as the device will hold them (types without kernels of
// their own grow to F16) plus compute.DeviceReserve must fit in the GPU's
// free memory.
func (b *Backend) CheckFits(ws []*compute.Weight, vs []*compute.Vector) error {
	var need int64
	for _, w := range ws {
		need += deviceBytes(w)
	}
	for _, v := range vs {
		need += 4 * int64(len(v.Data))
	}
	return fits(need, b.FreeMemory())
}

// fits fails when need bytes of weights and the reserve exceed free.
func fits(need, free int64) error {
	if reserve := compute.DeviceReserve(free); need+reserve > free {
		return fmt.Errorf("%w: the weights take %s on the GPU and it has %s free (%s kept for activations); use a smaller quant, free the GPU, or run on the CPU (--device cpu)",
			ErrNoRoom, humanize.Bytes(need), humanize.Bytes(free), humanize.Bytes(reserve))
	}
	return nil
}
