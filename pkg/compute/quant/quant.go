// Package quant owns the ggml tensor block formats that helexa computes with:
// the exact byte layouts of F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1,
// Q2_K, Q3_K, Q4_K, Q5_K and Q6_K weights and of the Q8_0, Q8_1 and Q8_K
// activation formats; dequantization; ggml's reference quantizers; the
// activation quantization that ggml-cpu applies before every matrix product;
// and the per-row dot product of a weight row with quantized activations,
// computed with the same integer arithmetic and float accumulation order as
// ggml-cpu's generic vec_dot kernels.
//
// The block layouts and the type table (block sizes, byte sizes) come from
// pkg/dtype.
package quant

import (
	"errors"
	"fmt"
	"math"

	"github.com/helexa/helexa/pkg/dtype"
)

// ErrUnsupportedType is wrapped by every error about a type this package
// cannot handle for the requested operation.
var ErrUnsupportedType = errors.New("unsupported tensor type")

// ErrBufferSize is wrapped by every error about a buffer whose length does
// not fit the requested element count.
var ErrBufferSize = errors.New("buffer size mismatch")

func unsupported(op string, t dtype.Type) error {
	return fmt.Errorf("quant: %s: %w %s (supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_1, Q8_K)", op, ErrUnsupportedType, t)
}

// supported reports whether t is one of the formats of this package.
func supported(t dtype.Type) bool {
	switch t {
	case dtype.F32, dtype.F16, dtype.BF16, dtype.Q8_0, dtype.Q4_0, dtype.Q4_1,
		dtype.Q5_0, dtype.Q5_1, dtype.Q2_K, dtype.Q3_K, dtype.Q4_K, dtype.Q5_K,
		dtype.Q6_K, dtype.Q8_1, dtype.Q8_K:
		return true
	}
	return false
}

// Supported reports whether t is a format this package can dequantize,
// quantize and (for weight formats) multiply.
func Supported(t dtype.Type) bool { return supported(t) }

// rowBytes returns the byte size of n elements of t, or an error when n is
// not a whole number of blocks.
func rowBytes(op string, t dtype.Type, n int) (int, error) {
	if n < 0 {
		return 0, fmt.Errorf("quant: %s %s: negative element count %d: %w", op, t, n, ErrBufferSize)
	}
	bs := t.BlockSize()
	if n%bs != 0 {
		return 0, fmt.Errorf("quant: %s %s: %d elements is not a whole number of %d-element blocks: %w", op, t, n, bs, ErrBufferSize)
	}
	return n / bs * t.TypeSize(), nil
}

// Dequantize converts the first len(dst) elements stored in src (type t) to
// float32. len(dst) must be a whole number of blocks and src must hold at
// least that many blocks; extra bytes in src are ignored.
func Dequantize(t dtype.Type, src []byte, dst []float32) error {
	if !supported(t) {
		return unsupported("dequantize", t)
	}
	need, err := rowBytes("dequantize", t, len(dst))
	if err != nil {
		return err
	}
	if len(src) < need {
		return fmt.Errorf("quant: dequantize %d elements of %s needs %d bytes, got %d: %w", len(dst), t, need, len(src), ErrBufferSize)
	}
	src = src[:need]
	switch t {
	case dtype.F32:
		for i := range dst {
			dst[i] = f32at(src, 4*i)
		}
	case dtype.F16:
		for i := range dst {
			dst[i] = fp16(src, 2*i)
		}
	case dtype.BF16:
		for i := range dst {
			dst[i] = BF16ToFloat32(uint16(src[2*i]) | uint16(src[2*i+1])<<8)
		}
	case dtype.Q4_0:
		dequantQ4_0(src, dst)
	case dtype.Q4_1:
		dequantQ4_1(src, dst)
	case dtype.Q5_0:
		dequantQ5_0(src, dst)
	case dtype.Q5_1:
		dequantQ5_1(src, dst)
	case dtype.Q8_0:
		dequantQ8_0(src, dst)
	case dtype.Q8_1:
		dequantQ8_1(src, dst)
	case dtype.Q2_K:
		dequantQ2K(src, dst)
	case dtype.Q3_K:
		dequantQ3K(src, dst)
	case dtype.Q4_K:
		dequantQ4K(src, dst)
	case dtype.Q5_K:
		dequantQ5K(src, dst)
	case dtype.Q6_K:
		dequantQ6K(src, dst)
	case dtype.Q8_K:
		dequantQ8K(src, dst)
	}
	return nil
}

// Quantize converts src (a whole number of blocks) to type t into dst, which
// must hold at least the resulting bytes. It uses ggml's reference
// quantizers (quantize_row_*_ref, what llama-quantize uses without an
// importance matrix), so files built with it match llama.cpp's byte for byte
// up to float rounding of the search heuristics. F16/BF16 use ggml's
// conversions. For activations use QuantizeActivations instead.
func Quantize(t dtype.Type, src []float32, dst []byte) error {
	if !supported(t) {
		return unsupported("quantize", t)
	}
	need, err := rowBytes("quantize", t, len(src))
	if err != nil {
		return err
	}
	if len(dst) < need {
		return fmt.Errorf("quant: quantize %d elements to %s needs %d bytes, got %d: %w", len(src), t, need, len(dst), ErrBufferSize)
	}
	dst = dst[:need]
	switch t {
	case dtype.F32:
		for i, v := range src {
			putF32(dst, 4*i, v)
		}
	case dtype.F16:
		convertF16(src, dst)
	case dtype.BF16:
		convertBF16(src, dst)
	case dtype.Q4_0:
		quantizeQ4_0(src, dst)
	case dtype.Q4_1:
		quantizeQ4_1(src, dst)
	case dtype.Q5_0:
		quantizeQ5_0(src, dst)
	case dtype.Q5_1:
		quantizeQ5_1(src, dst)
	case dtype.Q8_0:
		quantizeQ8_0Ref(src, dst)
	case dtype.Q8_1:
		quantizeQ8_1Ref(src, dst)
	case dtype.Q2_K:
		quantizeQ2K(src, dst)
	case dtype.Q3_K:
		quantizeQ3K(src, dst)
	case dtype.Q4_K:
		quantizeQ4K(src, dst)
	case dtype.Q5_K:
		quantizeQ5K(src, dst)
	case dtype.Q6_K:
		quantizeQ6K(src, dst)
	case dtype.Q8_K:
		quantizeQ8K(src, dst)
	}
	return nil
}

// VecDotType returns the activation format ggml-cpu pairs with weight type
// t: Q8_0 for Q4_0/Q5_0/Q8_0, Q8_1 for Q4_1/Q5_1, Q8_K for Q2_K..Q6_K, and
// t itself for F32, F16 and BF16. It returns t unchanged for any other type
// (callers check Supported or the error of QuantizeActivations).
func VecDotType(t dtype.Type) dtype.Type {
	switch t {
	case dtype.Q4_0, dtype.Q5_0, dtype.Q8_0:
		return dtype.Q8_0
	case dtype.Q4_1, dtype.Q5_1:
		return dtype.Q8_1
	case dtype.Q2_K, dtype.Q3_K, dtype.Q4_K, dtype.Q5_K, dtype.Q6_K:
		return dtype.Q8_K
	}
	return t
}

// isWeight reports whether t is a weight format VecDot accepts.
func isWeight(t dtype.Type) bool {
	switch t {
	case dtype.F32, dtype.F16, dtype.BF16, dtype.Q8_0, dtype.Q4_0, dtype.Q4_1,
		dtype.Q5_0, dtype.Q5_1, dtype.Q2_K, dtype.Q3_K, dtype.Q4_K, dtype.Q5_K, dtype.Q6_K:
		return true
	}
	return false
}

// ActivationBytes returns the size in bytes of QuantizeActivations' output
// for n elements multiplied with weights of type t (0 when n is not a whole
// number of blocks of VecDotType(t) or t is not a weight format).
func ActivationBytes(t dtype.Type, n int) int {
	if !isWeight(t) {
		return 0
	}
	b, err := rowBytes("activation", VecDotType(t), n)
	if err != nil {
		return 0
	}
	return b
}

// QuantizeActivations converts the activations x into VecDotType(t), bit for
// bit as ggml-cpu does before a matrix product with weights of type t on
// x86 with AVX2 (the build llama.cpp's references come from): Q8_0/Q8_1 with
// d = max|x|/127 and round-to-nearest-even of x·127/max|x|; Q8_K as
// quantize_row_q8_K_ref; F16/BF16 with ggml's conversions; F32 copied. It
// does not allocate.
func QuantizeActivations(t dtype.Type, x []float32, dst []byte) error {
	if !isWeight(t) {
		return unsupported("quantize activations for", t)
	}
	at := VecDotType(t)
	need, err := rowBytes("quantize activations", at, len(x))
	if err != nil {
		return err
	}
	if len(dst) < need {
		return fmt.Errorf("quant: quantize %d activations to %s needs %d bytes, got %d: %w", len(x), at, need, len(dst), ErrBufferSize)
	}
	dst = dst[:need]
	switch at {
	case dtype.F32:
		for i, v := range x {
			putF32(dst, 4*i, v)
		}
	case dtype.F16:
		convertF16(x, dst)
	case dtype.BF16:
		convertBF16(x, dst)
	case dtype.Q8_0:
		if !fastQuantizeQ8_0(x, dst) {
			quantizeQ8_0Act(x, dst)
		}
	case dtype.Q8_1:
		quantizeQ8_1Act(x, dst)
	case dtype.Q8_K:
		if !fastQuantizeQ8K(x, dst) {
			quantizeQ8K(x, dst)
		}
	}
	return nil
}

// CheckVecDot validates the arguments of VecDot once, so that hot loops can
// call VecDot without checks: t must be a weight format, n a whole number of
// blocks, w at least one row of n elements of t and xq at least
// ActivationBytes(t, n) bytes.
func CheckVecDot(t dtype.Type, w, xq []byte, n int) error {
	if !isWeight(t) {
		return unsupported("vec dot", t)
	}
	wb, err := rowBytes("vec dot", t, n)
	if err != nil {
		return err
	}
	xb, err := rowBytes("vec dot", VecDotType(t), n)
	if err != nil {
		return err
	}
	if len(w) < wb || len(xq) < xb {
		return fmt.Errorf("quant: vec dot of %d elements of %s needs %d weight and %d activation bytes, got %d and %d: %w", n, t, wb, xb, len(w), len(xq), ErrBufferSize)
	}
	return nil
}

// VecDot returns the dot product of one weight row w (n elements of type t)
// with activations xq already converted by QuantizeActivations(t, ...). The
// integer products are summed per block and the float accumulation follows
// ggml-cpu's generic vec_dot_<t>_<vec_dot_type> kernel (F32/F16/BF16: float
// products summed in float64). It does not allocate.
//
// VecDot does not validate its arguments: the caller checks them once with
// CheckVecDot. Invalid arguments give a wrong result or a panic from a
// bounds check; unsupported types return NaN.
func VecDot(t dtype.Type, w []byte, xq []byte, n int) float32 {
	switch t {
	case dtype.F32:
		return dotF32(w, xq, n)
	case dtype.F16:
		return dotF16(w, xq, n)
	case dtype.BF16:
		return dotBF16(w, xq, n)
	case dtype.Q4_0, dtype.Q4_1, dtype.Q5_0, dtype.Q5_1, dtype.Q8_0,
		dtype.Q2_K, dtype.Q3_K, dtype.Q4_K, dtype.Q5_K, dtype.Q6_K:
		return quantDot(t, w, xq, n)
	}
	return float32(math.NaN())
}

// goQuantDot is the pure-Go kernel for the quantized weight types; the cgo
// build's C kernels give bit-identical results.
func goQuantDot(t dtype.Type, w, xq []byte, n int) float32 {
	switch t {
	case dtype.Q4_0:
		return dotQ4_0(w, xq, n/32)
	case dtype.Q4_1:
		return dotQ4_1(w, xq, n/32)
	case dtype.Q5_0:
		return dotQ5_0(w, xq, n/32)
	case dtype.Q5_1:
		return dotQ5_1(w, xq, n/32)
	case dtype.Q8_0:
		return dotQ8_0(w, xq, n/32)
	case dtype.Q2_K:
		return dotQ2K(w, xq, n/256)
	case dtype.Q3_K:
		return dotQ3K(w, xq, n/256)
	case dtype.Q4_K:
		return dotQ4K(w, xq, n/256)
	case dtype.Q5_K:
		return dotQ5K(w, xq, n/256)
	case dtype.Q6_K:
		return dotQ6K(w, xq, n/256)
	}
	return float32(math.NaN())
}
