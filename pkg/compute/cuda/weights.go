package cuda

import (
	"fmt"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/dtype"
)

// format is how a weight is kept in device memory: in its own quantized
// layout where a kernel reads it, or as F16.
type format struct {
	// native is the file's type, kept as is (false: converted to F16 on
	// the host at load).
	native bool
	// suffix names the kernels (hx_mv_SUFFIX, hx_dq32_SUFFIX, …).
	suffix string
}

// nativeFormats are the types with their own matvec kernels (and, but
// for F16 and F32, which GEMMs take as they are, dequantize kernels). F32
// weights stay F32 so that F32 models keep their exactness.
var nativeFormats = map[dtype.Type]string{
	dtype.Q8_0: "q8_0", dtype.Q4_0: "q4_0", dtype.Q4_K: "q4_k", dtype.Q5_K: "q5_k", dtype.Q6_K: "q6_k", dtype.F16: "f16",
	dtype.F32: "f32",
}

// deviceFormat picks a weight type's device format: the native kernels'
// types stay as they are, every other type becomes F16.
func deviceFormat(t dtype.Type) format {
	if s, ok := nativeFormats[t]; ok {
		return format{native: true, suffix: s}
	}
	return format{suffix: "f16"}
}

// The format's kernel names; dqKernel dequantizes to F32 ("" for F16 and
// F32, which GEMMs take as they are).
func (f format) mvKernel() string   { return "hx_mv_" + f.suffix }
func (f format) mv3Kernel() string  { return "hx_mv3_" + f.suffix }
func (f format) mvgKernel() string  { return "hx_mvg_" + f.suffix }
func (f format) mv2Kernel() string  { return "hx_mv2_" + f.suffix }
func (f format) rowsKernel() string { return "hx_rows_" + f.suffix }
func (f format) dqKernel() string {
	if f.suffix == "f16" || f.suffix == "f32" {
		return ""
	}
	return "hx_dq32_" + f.suffix
}

// deviceBytes is what w takes in device memory.
func deviceBytes(w *compute.Weight) int64 {
	if deviceFormat(w.Type).native {
		return int64(len(w.Data))
	}
	return int64(w.Cols()) * int64(w.Rows()) * int64(w.Mats()) * 2
}

// hostF16 converts a weight of any supported type to F16 bits (the device
// format of the types without kernels of their own), one row at a time.
func hostF16(w *compute.Weight) ([]uint16, error) {
	cols, rows := w.Cols(), w.Rows()*w.Mats()
	out := make([]uint16, cols*rows)
	row := make([]float32, cols)
	rb := w.RowBytes()
	for r := 0; r < rows; r++ {
		if err := quant.Dequantize(w.Type, w.Data[r*rb:(r+1)*rb], row); err != nil {
			return nil, fmt.Errorf("converting %s to F16: %w", w.Name, err)
		}
		dst := out[r*cols : (r+1)*cols]
		for i, v := range row {
			dst[i] = quant.Float32ToFP16(v)
		}
	}
	return out, nil
}
