//go:build cuda

package cuda

import (
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"
)

// cublas is the part of cuBLAS the backend uses, opened at run time
// (gorgonia.org/cu's own binding lacks GemmEx and pins libcublas.so.11).
// Its calls run on the device's owner goroutine, on the default stream.
type cublas struct {
	lib     uintptr
	handle  uintptr
	destroy func(handle uintptr) int32
	gemmEx  func(handle uintptr, transA, transB, m, n, k int32, alpha unsafe.Pointer, a uintptr, aType, lda int32,
		b uintptr, bType, ldb int32, beta unsafe.Pointer, c uintptr, cType, ldc int32, computeType, algo int32) int32
	// one and zero are GemmEx's host scalars (heap memory: a pointer to
	// them outlives the call's stack frame).
	one, zero *float32
}

// cuBLAS and CUDA enum values (cublas_api.h, library_types.h).
const (
	cudaR16F          = 2
	cudaR32F          = 0
	cublasCompute32F  = 68
	cublasGemmDefault = -1
)

// cublasLibs are the libraries tried in order: by soname (the loader's
// path), then where NVIDIA's toolkit installs them when ld.so.conf does not
// name its folder.
var cublasLibs = []string{"libcublas.so.12", "libcublas.so.13", "libcublas.so.11", "libcublas.so",
	"/usr/local/cuda/lib64/libcublas.so.12", "/usr/local/cuda/lib64/libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.11"}

// openCublas opens the first cuBLAS found and creates a handle in the
// current context; nil when none loads (the backend then runs every
// matmul on its matvec kernels).
func openCublas() *cublas {
	for _, name := range cublasLibs {
		lib, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			continue
		}
		b, err := bindCublas(lib)
		if err != nil {
			purego.Dlclose(lib)
			continue
		}
		return b
	}
	return nil
}

func bindCublas(lib uintptr) (b *cublas, err error) {
	defer func() {
		if r := recover(); r != nil { // RegisterLibFunc panics on a missing symbol
			err = fmt.Errorf("binding cuBLAS: %v", r)
		}
	}()
	b = &cublas{lib: lib, one: new(float32), zero: new(float32)}
	*b.one = 1
	var create func(handle *uintptr) int32
	purego.RegisterLibFunc(&create, lib, "cublasCreate_v2")
	purego.RegisterLibFunc(&b.destroy, lib, "cublasDestroy_v2")
	purego.RegisterLibFunc(&b.gemmEx, lib, "cublasGemmEx")
	if st := create(&b.handle); st != 0 {
		return nil, fmt.Errorf("cublasCreate: status %d", st)
	}
	return b, nil
}

// gemmF16 computes out (F32) = x·Wᵀ for F16 w (rows × cols) and F16 x
// (n × cols), all row-major (see planGemm).
func (b *cublas) gemmF16(w, x, out devPtr, rows, cols, n, ldo int) error {
	return b.gemm(w, x, out, rows, cols, n, ldo, cudaR16F)
}

// gemmF32 is gemmF16 with F32 operands (CUBLAS_COMPUTE_32F: no TF32).
func (b *cublas) gemmF32(w, x, out devPtr, rows, cols, n, ldo int) error {
	return b.gemm(w, x, out, rows, cols, n, ldo, cudaR32F)
}

// gemm is one GemmEx with operands of type typ, F32 accumulation and
// result.
func (b *cublas) gemm(w, x, out devPtr, rows, cols, n, ldo int, typ int32) error {
	g := planGemm(rows, cols, n, ldo)
	st := b.gemmEx(b.handle, int32(g.transA), int32(g.transB), int32(g.m), int32(g.n), int32(g.k),
		unsafe.Pointer(b.one), uintptr(w), typ, int32(g.lda), uintptr(x), typ, int32(g.ldb),
		unsafe.Pointer(b.zero), uintptr(out), cudaR32F, int32(g.ldc), cublasCompute32F, cublasGemmDefault)
	if st != 0 {
		return fmt.Errorf("cublasGemmEx (%d × %d × %d, operand type %d): status %d", g.m, g.n, g.k, typ, st)
	}
	return nil
}

func (b *cublas) close() {
	b.destroy(b.handle)
	purego.Dlclose(b.lib)
}
