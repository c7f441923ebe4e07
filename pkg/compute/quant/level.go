package quant

import (
	"fmt"
	"strings"
	"sync"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/pkg/dtype"
)

// Level is a family of CPU kernels, from the portable oracle up.
type Level int

// Kernel levels.
const (
	// LevelPortable is the pure-Go kernels: the oracle.
	LevelPortable Level = iota
	// LevelC is the C kernels of kernels.c (AVX2+F16C where the CPU has
	// them), bit-identical to the Go ones.
	LevelC
	// LevelAVX2 adds the AVX2+FMA matmul kernels of kernels_avx2*.c:
	// exact integer sums, float sums in another order (the same for a row
	// however it is batched).
	LevelAVX2
	// LevelVNNI adds the AVX-512 VNNI matmul kernels and the vector
	// attention: exact integer sums, float sums in another order.
	LevelVNNI
)

func (l Level) String() string {
	switch l {
	case LevelPortable:
		return "portable"
	case LevelC:
		return "exact"
	case LevelAVX2:
		return "avx2"
	default:
		return "avx512"
	}
}

// ParseLevel reads a HELEXA_CPU_KERNELS value ("" and "auto" mean the
// fastest level built in and supported by this CPU).
func ParseLevel(s string) (Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return maxLevel(), nil
	case "avx512":
		return min(LevelVNNI, maxLevel()), nil
	case "avx2":
		return min(LevelAVX2, maxLevel()), nil
	case "exact":
		return min(LevelC, maxLevel()), nil
	case "portable":
		return LevelPortable, nil
	}
	return 0, fmt.Errorf("%s=%q: want auto, avx512, avx2, exact or portable", envvars.CPUKernels.Name, s)
}

// BitExact reports whether VecDotRows and VecDotRowsMulti compute weight
// type t bit-identically to VecDot at the active level (the AVX2 and
// AVX-512 VNNI kernels sum floats in another order).
func BitExact(t dtype.Type) bool {
	switch lvl := ActiveLevel(); {
	case lvl >= LevelVNNI && vnniCovers(t):
		return false
	case lvl >= LevelAVX2 && avx2Covers(t):
		return false
	}
	return true
}

// ActiveLevel is the level this process runs: HELEXA_CPU_KERNELS, read
// once (an unknown value falls back to auto; `helexa version` reports it).
var ActiveLevel = sync.OnceValue(func() Level {
	l, err := ParseLevel(envvars.CPUKernels.Get())
	if err != nil {
		return maxLevel()
	}
	return l
})
