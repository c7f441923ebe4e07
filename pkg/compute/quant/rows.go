package quant

import (
	"fmt"
	"math"

	"github.com/helexa/helexa/pkg/dtype"
)

// weightLayout is what the dot products need to know about a weight type:
// elements per block and the bytes of one weight block and of one block of
// its activation type.
type weightLayout struct {
	block, wsize, xsize int
}

// layoutOf describes a weight format VecDot accepts, without the dtype
// table's map lookups (the hot path calls it once per row range).
func layoutOf(t dtype.Type) (weightLayout, bool) {
	const q8_0, q8_1, q8_k = 2 + 32, 2 + 2 + 32, 4 + dtype.QK_K + dtype.QK_K/16*2
	switch t {
	case dtype.F32:
		return weightLayout{1, 4, 4}, true
	case dtype.F16, dtype.BF16:
		return weightLayout{1, 2, 2}, true
	case dtype.Q4_0:
		return weightLayout{32, 2 + 16, q8_0}, true
	case dtype.Q4_1:
		return weightLayout{32, 2 + 2 + 16, q8_1}, true
	case dtype.Q5_0:
		return weightLayout{32, 2 + 4 + 16, q8_0}, true
	case dtype.Q5_1:
		return weightLayout{32, 2 + 2 + 4 + 16, q8_1}, true
	case dtype.Q8_0:
		return weightLayout{32, q8_0, q8_0}, true
	case dtype.Q2_K:
		return weightLayout{dtype.QK_K, dtype.QK_K/16 + dtype.QK_K/4 + 2 + 2, q8_k}, true
	case dtype.Q3_K:
		return weightLayout{dtype.QK_K, dtype.QK_K/8 + dtype.QK_K/4 + 12 + 2, q8_k}, true
	case dtype.Q4_K:
		return weightLayout{dtype.QK_K, 2 + 2 + 12 + dtype.QK_K/2, q8_k}, true
	case dtype.Q5_K:
		return weightLayout{dtype.QK_K, 2 + 2 + 12 + dtype.QK_K/8 + dtype.QK_K/2, q8_k}, true
	case dtype.Q6_K:
		return weightLayout{dtype.QK_K, dtype.QK_K/2 + dtype.QK_K/4 + dtype.QK_K/16 + 2, q8_k}, true
	}
	return weightLayout{}, false
}

// VecDotRows computes, for each i < nRows, out[i] = VecDot(t, w[i*rowBytes:],
// xq, n): the dot products of nRows weight rows (n elements of type t each,
// stored rowBytes apart in w) with one activation row xq converted by
// QuantizeActivations(t, ...). The results are bit-identical to calling
// VecDot row by row; the cgo build runs the whole range in one C call.
//
// Unlike VecDot it validates its arguments (a few comparisons per call, not
// per row): an unsupported type wraps ErrUnsupportedType, and n that is not
// a whole number of blocks, a rowBytes shorter than one row, or w, xq or out
// too short for nRows rows wrap ErrBufferSize. It does not allocate.
func VecDotRows(t dtype.Type, w []byte, rowBytes, nRows int, xq []byte, n int, out []float32) error {
	l, ok := layoutOf(t)
	if !ok {
		return unsupported("vec dot rows", t)
	}
	if n < 0 || n%l.block != 0 {
		return fmt.Errorf("quant: vec dot rows %s: %d elements is not a whole number of %d-element blocks: %w", t, n, l.block, ErrBufferSize)
	}
	if nRows <= 0 {
		if nRows < 0 {
			return fmt.Errorf("quant: vec dot rows %s: negative row count %d: %w", t, nRows, ErrBufferSize)
		}
		return nil
	}
	wb, xb := n/l.block*l.wsize, n/l.block*l.xsize
	if rowBytes < wb {
		return fmt.Errorf("quant: vec dot rows %s: row stride %d bytes is shorter than a row of %d elements (%d bytes): %w", t, rowBytes, n, wb, ErrBufferSize)
	}
	if len(w) < (nRows-1)*rowBytes+wb || len(xq) < xb || len(out) < nRows {
		return fmt.Errorf("quant: vec dot rows %s: %d rows of %d elements need %d weight bytes, %d activation bytes and %d outputs, got %d, %d and %d: %w",
			t, nRows, n, (nRows-1)*rowBytes+wb, xb, nRows, len(w), len(xq), len(out), ErrBufferSize)
	}
	if n == 0 {
		clear(out[:nRows])
		return nil
	}
	switch lvl := ActiveLevel(); {
	case lvl == LevelPortable:
		goDotRows(t, w, rowBytes, nRows, xq[:xb], n, out[:nRows])
	case !fastRows(lvl, t, w, rowBytes, nRows, xq[:xb], xb, 1, n, out[:nRows], nRows):
		dotRows(t, w, rowBytes, nRows, xq[:xb], n, out[:nRows])
	}
	return nil
}

// goDotRows is the pure-Go loop behind VecDotRows (arguments checked).
func goDotRows(t dtype.Type, w []byte, rowBytes, nRows int, xq []byte, n int, out []float32) {
	kernel := goKernel(t)
	for i := range out[:nRows] {
		out[i] = kernel(w[i*rowBytes:], xq, n)
	}
}

// goKernel returns the Go dot product of one row of weight type t.
func goKernel(t dtype.Type) func(w, xq []byte, n int) float32 {
	switch t {
	case dtype.F32:
		return dotF32
	case dtype.F16:
		return dotF16
	case dtype.BF16:
		return dotBF16
	case dtype.Q4_0:
		return func(w, xq []byte, n int) float32 { return dotQ4_0(w, xq, n/32) }
	case dtype.Q4_1:
		return func(w, xq []byte, n int) float32 { return dotQ4_1(w, xq, n/32) }
	case dtype.Q5_0:
		return func(w, xq []byte, n int) float32 { return dotQ5_0(w, xq, n/32) }
	case dtype.Q5_1:
		return func(w, xq []byte, n int) float32 { return dotQ5_1(w, xq, n/32) }
	case dtype.Q8_0:
		return func(w, xq []byte, n int) float32 { return dotQ8_0(w, xq, n/32) }
	case dtype.Q2_K:
		return func(w, xq []byte, n int) float32 { return dotQ2K(w, xq, n/256) }
	case dtype.Q3_K:
		return func(w, xq []byte, n int) float32 { return dotQ3K(w, xq, n/256) }
	case dtype.Q4_K:
		return func(w, xq []byte, n int) float32 { return dotQ4K(w, xq, n/256) }
	case dtype.Q5_K:
		return func(w, xq []byte, n int) float32 { return dotQ5K(w, xq, n/256) }
	case dtype.Q6_K:
		return func(w, xq []byte, n int) float32 { return dotQ6K(w, xq, n/256) }
	}
	return func([]byte, []byte, int) float32 { return float32(math.NaN()) }
}

// VecDotRowsMulti computes, for each weight row i < nRows and activation
// row j < nX, out[j*outStride+i] = VecDot(t, w[i*rowBytes:],
// xq[j*xStride:], n): VecDotRows for several activation rows at once
// (prefill). The results are bit-identical to VecDotRows per activation
// row; the cgo build decodes each weight block once for up to eight
// activation rows.
//
// Its argument errors are those of VecDotRows, plus an xStride shorter than
// one activation row or an outStride shorter than nRows (ErrBufferSize).
// It does not allocate.
func VecDotRowsMulti(t dtype.Type, w []byte, rowBytes, nRows int, xq []byte, xStride, nX, n int, out []float32, outStride int) error {
	l, ok := layoutOf(t)
	if !ok {
		return unsupported("vec dot rows", t)
	}
	if n < 0 || n%l.block != 0 {
		return fmt.Errorf("quant: vec dot rows %s: %d elements is not a whole number of %d-element blocks: %w", t, n, l.block, ErrBufferSize)
	}
	if nRows < 0 || nX < 0 {
		return fmt.Errorf("quant: vec dot rows %s: negative row count (%d weight, %d activation rows): %w", t, nRows, nX, ErrBufferSize)
	}
	if nRows == 0 || nX == 0 {
		return nil
	}
	wb, xb := n/l.block*l.wsize, n/l.block*l.xsize
	if rowBytes < wb || xStride < xb || outStride < nRows {
		return fmt.Errorf("quant: vec dot rows %s: strides (%d weight bytes, %d activation bytes, %d outputs) shorter than a row (%d, %d, %d): %w",
			t, rowBytes, xStride, outStride, wb, xb, nRows, ErrBufferSize)
	}
	if len(w) < (nRows-1)*rowBytes+wb || len(xq) < (nX-1)*xStride+xb || len(out) < (nX-1)*outStride+nRows {
		return fmt.Errorf("quant: vec dot rows %s: %d×%d rows of %d elements need %d weight bytes, %d activation bytes and %d outputs, got %d, %d and %d: %w",
			t, nRows, nX, n, (nRows-1)*rowBytes+wb, (nX-1)*xStride+xb, (nX-1)*outStride+nRows, len(w), len(xq), len(out), ErrBufferSize)
	}
	if n == 0 {
		for j := 0; j < nX; j++ {
			clear(out[j*outStride : j*outStride+nRows])
		}
		return nil
	}
	switch lvl := ActiveLevel(); {
	case lvl == LevelPortable:
		goDotRowsMulti(t, w, rowBytes, nRows, xq, xStride, nX, n, out, outStride)
	case !fastRows(lvl, t, w, rowBytes, nRows, xq, xStride, nX, n, out, outStride):
		dotRowsMulti(t, w, rowBytes, nRows, xq, xStride, nX, n, out, outStride)
	}
	return nil
}

// goDotRowsMulti is the pure-Go loop behind VecDotRowsMulti (arguments
// checked): goDotRows per activation row.
func goDotRowsMulti(t dtype.Type, w []byte, rowBytes, nRows int, xq []byte, xStride, nX, n int, out []float32, outStride int) {
	for j := 0; j < nX; j++ {
		goDotRows(t, w, rowBytes, nRows, xq[j*xStride:], n, out[j*outStride:j*outStride+nRows])
	}
}
