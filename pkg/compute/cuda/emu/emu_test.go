package emu

import (
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/helexa/helexa/pkg/compute/cuda/kernels"
	"github.com/helexa/helexa/pkg/compute/quant"
)

// TestCompiledSources fails when the emulator was compiled from other
// kernel sources than the ones on disk (cgo does not rebuild it when only
// the included .cu files change).
func TestCompiledSources(t *testing.T) {
	want, err := kernels.SourceHash(os.DirFS("../kernels"))
	if err != nil {
		t.Fatal(err)
	}
	if got := SourceHash(); got != want {
		t.Fatalf("the emulator was compiled from kernel sources with hash %s, the sources now hash to %s: run scripts/build-ptx.sh (make ptx), which updates kernels_hash.h", got, want)
	}
}

func TestNames(t *testing.T) {
	var got []string
	for _, n := range Names() {
		if !strings.HasPrefix(n, "emu_test_") {
			got = append(got, n)
		}
	}
	want := kernels.Names()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the emulator has kernels %v, the ABI lists %v", got, want)
	}
}

func TestShuffles(t *testing.T) {
	out := make([]int32, 4*64)
	must(t, Launch("emu_test_shuffles", dim(1), dim(64), out))
	for l := 0; l < 64; l++ {
		w, lane := l/32*32, l%32
		down, up := l, l
		if lane+3 < 32 {
			down = l + 3
		}
		if lane >= 5 {
			up = l - 5
		}
		want := []int32{int32(l ^ 1), int32(down), int32(up), int32(w + lane/8*8 + 7)}
		if got := out[4*l : 4*l+4]; !slices.Equal(got, want) {
			t.Errorf("lane %d: xor/down/up/idx gave %v, want %v", l, got, want)
		}
	}
}

func TestSharedMemoryAndBarrier(t *testing.T) {
	const blocks, n = 3, 96
	out := make([]int32, blocks*n)
	must(t, Launch("emu_test_shared", dim(blocks), dim(n), out))
	for b := 0; b < blocks; b++ {
		for i := 0; i < n; i++ {
			if want := int32(1000*b + n - 1 - i); out[b*n+i] != want {
				t.Fatalf("block %d thread %d read %d, want %d", b, i, out[b*n+i], want)
			}
		}
	}
}

func TestEmulatorErrors(t *testing.T) {
	buf := make([]int32, 64)
	tests := []struct {
		name  string
		block int
		args  []Arg
		want  string
	}{
		{"emu_test_early_return", 64, []Arg{buf}, "have returned"},
		{"emu_test_half_warp", 32, []Arg{buf}, "wait at a shuffle"},
		{"emu_test_const_write", 32, []Arg{buf}, "const buffer"},
		{"hx_trap", 1, nil, "__trap()"},
		{"hx_add", 32, []Arg{buf, buf, 1}, "want []float32"},
		{"hx_add", 32, []Arg{make([]float32, 1), make([]float32, 1), float32(1)}, "want an int"},
		{"hx_add", 32, []Arg{make([]float32, 1)}, "takes 3 arguments"},
		{"hx_add", 2048, []Arg{make([]float32, 1), make([]float32, 1), 1}, "bad grid"},
		{"hx_nope", 1, nil, "no kernel"},
	}
	for _, tt := range tests {
		err := Launch(tt.name, dim(1), dim(tt.block), tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
	// overlapping slices that are not the same slice
	x := make([]float32, 8)
	if err := Launch("hx_add", dim(1), dim(32), x[:4], x[2:6], 4); err == nil || !strings.Contains(err.Error(), "overlaps") {
		t.Errorf("overlapping arguments: %v", err)
	}
	// the same slice twice is one buffer
	for i := range x {
		x[i] = float32(i)
	}
	must(t, Launch("hx_add", dim(1), dim(32), x, x, len(x)))
	for i, v := range x {
		if v != float32(2*i) {
			t.Fatalf("in-place add: x[%d] = %g, want %d", i, v, 2*i)
		}
	}
}

func TestLaunchRaw(t *testing.T) {
	const n = 300
	dst, err := Alloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Free()
	src, err := Alloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	d := unsafe.Slice((*float32)(unsafe.Pointer(&dst.Bytes()[0])), n)
	s := unsafe.Slice((*float32)(unsafe.Pointer(&src.Bytes()[0])), n)
	for i := range d {
		d[i], s[i] = float32(i), 0.5
	}
	c := float32(4)
	// softcap's float parameter and add's int one, as 64-bit slots
	must(t, LaunchRaw("hx_add", grid1D(n), dim(256), []uint64{uint64(dst.Addr()), uint64(src.Addr()), uint64(uint32(int32(n)))}))
	must(t, LaunchRaw("hx_softcap", grid1D(n), dim(256), []uint64{uint64(dst.Addr()), uint64(uint32(int32(n))), uint64(math.Float32bits(c))}))
	for i, v := range d {
		if want := float32(math.Tanh(float64(float32(i)+0.5)/4)) * 4; math.Abs(float64(v-want)) > 1e-6 {
			t.Fatalf("d[%d] = %g, want %g", i, v, want)
		}
	}
	// a pointer into the middle of an allocation is fine; one past it or
	// into freed memory is not
	must(t, LaunchRaw("hx_add", dim(1), dim(32), []uint64{uint64(dst.Addr()) + 8, uint64(src.Addr()), 3}))
	addr := uint64(src.Addr())
	src.Free()
	src.Free()
	for _, p := range []uint64{addr, uint64(dst.Addr()) + 4*n + 4} {
		err := LaunchRaw("hx_add", dim(1), dim(32), []uint64{uint64(dst.Addr()), p, 1})
		if err == nil || !strings.Contains(err.Error(), "not emulator memory") {
			t.Errorf("pointer %#x: %v", p, err)
		}
	}
	if err := LaunchRaw("hx_add", dim(1), dim(32), []uint64{1, 2}); err == nil {
		t.Error("two slots for three parameters accepted")
	}
}

// TestGuardPage runs a write one element past a buffer in a child process,
// which must crash (the page after every buffer is inaccessible).
func TestGuardPage(t *testing.T) {
	if os.Getenv("HX_EMU_GUARD_CHILD") != "" {
		out := make([]int32, 7)
		i := 0
		if os.Getenv("HX_EMU_GUARD_CHILD") == "past" {
			i = len(out)
		}
		err := Launch("emu_test_write", dim(1), dim(32), out, i, 5)
		os.Stdout.WriteString("survived\n")
		if err != nil || out[0] != 5 {
			os.Exit(3)
		}
		os.Exit(0)
	}
	if testing.Short() {
		t.Skip("runs a child process")
	}
	for _, mode := range []string{"inside", "past"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestGuardPage$")
		cmd.Env = append(os.Environ(), "HX_EMU_GUARD_CHILD="+mode)
		out, err := cmd.CombinedOutput()
		survived := strings.Contains(string(out), "survived")
		if mode == "inside" && (err != nil || !survived) {
			t.Errorf("a write inside the buffer: %v\n%s", err, out)
		}
		if mode == "past" && (err == nil || survived) {
			t.Errorf("a write past the end of the buffer did not fault: %v\n%s", err, out)
		}
	}
}

func TestHalfConversions(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		got, want := halfToFloat(uint16(h)), quant.FP16ToFloat32(uint16(h))
		if math.Float32bits(got) != math.Float32bits(want) && !(isNaN(got) && isNaN(want)) {
			t.Fatalf("half %#04x → %g, want %g", h, got, want)
		}
	}
	var xs []float32
	for h := 0; h < 0x7c00; h++ { // every finite positive half, its neighbours and the midpoints
		f := quant.FP16ToFloat32(uint16(h))
		next := quant.FP16ToFloat32(uint16(h + 1))
		mid := float32((float64(f) + float64(next)) / 2)
		xs = append(xs, f, mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, 1e9))
	}
	xs = append(xs, 65504, 65519.99, 65520, 1e10, float32(math.Inf(1)), 1e-10, 0x1p-25, 0x1.8p-25, 0x1p-24, float32(math.NaN()))
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		xs = append(xs, math.Float32frombits(r.Uint32()))
	}
	for _, x := range xs {
		for _, v := range []float32{x, -x} {
			if got, want := floatToHalf(v), quant.Float32ToFP16(v); got != want {
				t.Fatalf("%g (%#08x) → half %#04x, want %#04x", v, math.Float32bits(v), got, want)
			}
		}
	}
}

func isNaN(f float32) bool { return f != f }

// dim is a one-dimensional grid or block.
func dim(n int) [3]int { return [3]int{n, 1, 1} }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
