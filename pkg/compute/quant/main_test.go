package quant

import (
	"os"
	"testing"

	"github.com/helexa/helexa/internal/envvars"
)

// TestMain runs this package's tests at the bit-exact kernel level unless
// HELEXA_CPU_KERNELS says otherwise: the tests of VecDot, VecDotRows and
// VecDotRowsMulti check the C kernels bit for bit against the Go ones,
// and TestFastMatchesPortable calls the AVX2 and AVX-512 VNNI kernels
// directly.
func TestMain(m *testing.M) {
	if !envvars.CPUKernels.IsSet() {
		os.Setenv(envvars.CPUKernels.Name, "exact")
	}
	os.Exit(m.Run())
}
