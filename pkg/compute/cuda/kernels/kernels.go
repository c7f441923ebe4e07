// Package kernels owns helexa's CUDA device kernels: their sources (*.cu,
// *.cuh in this directory, one translation unit all.cu), the PTX that
// scripts/build-ptx.sh (make ptx) compiles from them for compute capability
// 8.0 and 9.0 (helexa_sm80.ptx, helexa_sm90.ptx) and the machine code
// ptxas makes of them (helexa_sm80.cubin, helexa_sm90.cubin), all checked in
// and embedded here, and the list of kernel names the CUDA backend loads.
// It needs neither cgo nor CUDA: pkg/compute/cuda loads the kernels with the
// driver, and pkg/compute/cuda/emu runs the same sources on the CPU in tests.
//
// Each PTX file starts with the line
//
//	// helexa-kernels-source-sha256: <hex>
//
// where <hex> is SourceHash of the sources it was compiled from;
// cubins.sha256 holds the same for the cubins. The tests fail when either
// is stale.
package kernels

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed helexa_sm80.ptx
var ptxSM80 string

//go:embed helexa_sm90.ptx
var ptxSM90 string

//go:embed helexa_sm80.cubin
var cubinSM80 []byte

//go:embed helexa_sm90.cubin
var cubinSM90 []byte

//go:embed cubins.sha256
var cubinsHash string

// HashPrefix starts the first line of each PTX file, followed by the
// source hash.
const HashPrefix = "// helexa-kernels-source-sha256: "

// PTX returns the kernels' PTX for a device of compute capability
// major.minor: the sm_90 build from 9.0 on, the sm_80 build from 8.0 on
// (the driver JIT-compiles either for the device), an error below 8.0.
func PTX(major, minor int) (string, error) {
	switch {
	case major >= 9:
		return ptxSM90, nil
	case major == 8:
		return ptxSM80, nil
	}
	return "", fmt.Errorf("cuda kernels: compute capability %d.%d is not supported (helexa needs 8.0 or newer)", major, minor)
}

// Cubin returns the kernels as machine code for a device of compute
// capability major.minor when there is a build it runs: sm_90's for 9.0,
// sm_80's for 8.x (machine code runs on later minor revisions of its major
// one); nil otherwise, and the driver compiles the PTX instead (which takes
// seconds the first time a machine loads it).
func Cubin(major, minor int) []byte {
	switch {
	case major == 9 && minor == 0:
		return cubinSM90
	case major == 8:
		return cubinSM80
	}
	return nil
}

// Names lists every kernel of the PTX, as the backend launches them.
func Names() []string {
	return []string{
		// element-wise and row copies: grid ceil(N/256), block 256
		"hx_swiglu", "hx_geglu", "hx_softcap", "hx_add", "hx_add_row",
		"hx_gather_rows", "hx_scale_rows_to", "hx_sum_row_groups",
		"hx_f32_to_f16", "hx_store_kv_f32", "hx_store_kv_f16", "hx_rope",
		"hx_trap",
		// row reductions: grid rows, block 256
		"hx_rmsnorm", "hx_add_rmsnorm", "hx_rmsnorm2", "hx_argmax_rows",
		// activations rounded as the CPU quantizes them: grid ceil(n/1024) (q8k) or ceil(n/128) (q8_0), block 128
		"hx_round_q8k", "hx_round_q8_0",
		// hx_add_rmsnorm with its output also rounded as hx_round_q8k: grid rows, block 256
		"hx_add_rmsnorm_q8k",
		"hx_rmsnorm_q8k",
		// both RoPEs of a layer and the store of k and v: grid ceil(N/256), block 256
		"hx_rope2_store_f32", "hx_rope2_store_f16", "hx_norm_rope2_store_f32", "hx_norm_rope2_store_f16",
		// attention: grid (rows, heads), block 128
		"hx_attention_f32", "hx_attention_f16",
		// split decode attention: grid (rows, heads, splits), then (rows, heads); block 128
		"hx_attention_part_f32", "hx_attention_part_f16",
		// decode matmuls: grid ceil(rows/4), block 128
		"hx_mv_f32", "hx_mv_f16", "hx_mv_q8_0", "hx_mv_q4_0", "hx_mv_q4_k", "hx_mv_q5_k", "hx_mv_q6_k",
		// up to three decode matmuls of one format and input: grid (ceil(rows/4), count), block 128
		"hx_mv3_f32", "hx_mv3_f16", "hx_mv3_q8_0", "hx_mv3_q4_0", "hx_mv3_q4_k", "hx_mv3_q5_k", "hx_mv3_q6_k",
		// SwiGLU of two decode matmuls of one format: grid ceil(rows/4), block 128
		"hx_mvg_f32", "hx_mvg_f16", "hx_mvg_q8_0", "hx_mvg_q4_0", "hx_mvg_q4_k", "hx_mvg_q5_k", "hx_mvg_q6_k",
		// tall decode matmuls of one activation row, two rows a warp: grid ceil(rows/8), block 128
		"hx_mv2_f32", "hx_mv2_f16", "hx_mv2_q8_0", "hx_mv2_q4_0", "hx_mv2_q4_k", "hx_mv2_q5_k", "hx_mv2_q6_k",
		// dequantization to F32: grid rows, block 256
		"hx_dq32_q8_0", "hx_dq32_q4_0", "hx_dq32_q4_k", "hx_dq32_q5_k", "hx_dq32_q6_k",
		// embedding lookup: grid n, block 256
		"hx_rows_f32", "hx_rows_f16", "hx_rows_q8_0", "hx_rows_q4_0", "hx_rows_q4_k", "hx_rows_q5_k", "hx_rows_q6_k",
		// recurrent layers (recurrent.cu): per span, or element-wise
		"hx_conv_silu", "hx_l2norm_heads", "hx_delta_net", "hx_split_heads", "hx_sigmoid_mul",
	}
}

// SourceHash returns the hex SHA-256 of the concatenated contents of the
// *.cu and *.cuh files at the root of fsys (the kernel sources), taken in
// byte order of their names: the hash scripts/build-ptx.sh writes into the
// PTX files.
func SourceHash(fsys fs.FS) (string, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return "", fmt.Errorf("kernel sources: %w", err)
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if e.Type().IsRegular() && (strings.HasSuffix(n, ".cu") || strings.HasSuffix(n, ".cuh")) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "", fmt.Errorf("kernel sources: no .cu or .cuh files")
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return "", fmt.Errorf("kernel sources: %w", err)
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// PTXSourceHash returns the source hash recorded on the first line of a
// PTX file, or "" when it has none.
func PTXSourceHash(ptx string) string {
	line, _, _ := strings.Cut(ptx, "\n")
	h, ok := strings.CutPrefix(line, HashPrefix)
	if !ok {
		return ""
	}
	return strings.TrimSpace(h)
}
