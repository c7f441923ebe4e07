package cuda

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/dtype"
)

func TestArgsSlots(t *testing.T) {
	a := newArgs(4).ptr(0xdeadbeef00).i32(-3).f32(1.5).i32(7)
	want := []uint64{0xdeadbeef00, 0xfffffffd, uint64(math.Float32bits(1.5)), 7}
	if !reflect.DeepEqual(a.slots, want) {
		t.Fatalf("slots %#x, want %#x", a.slots, want)
	}
	// What the driver does with each parameter: read its size from the
	// start of its slot.
	if got := *(*int32)(unsafe.Pointer(&a.slots[1])); got != -3 {
		t.Errorf("int parameter reads back %d", got)
	}
	if got := *(*float32)(unsafe.Pointer(&a.slots[2])); got != 1.5 {
		t.Errorf("float parameter reads back %v", got)
	}
	if got := *(*uint64)(unsafe.Pointer(&a.slots[0])); got != 0xdeadbeef00 {
		t.Errorf("pointer reads back %#x", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("an int beyond int32 was packed")
		}
	}()
	newArgs(1).i32(math.MaxInt32 + 1)
}

func TestGrid1D(t *testing.T) {
	for _, tc := range [][2]int{{0, 1}, {1, 1}, {256, 1}, {257, 2}, {1024, 4}} {
		if got := grid1D(tc[0]); got != tc[1] {
			t.Errorf("grid1D(%d) = %d, want %d", tc[0], got, tc[1])
		}
	}
}

func TestPlanKV(t *testing.T) {
	s := compute.KVShape{Layers: 1, NumBlocks: 8, BlockSize: 4, KVDim: 2}
	spans := []compute.SeqSpan{
		{Row: 0, N: 2, Pos: 3, Blocks: []int32{5, 2}},    // positions 3, 4
		{Row: 2, N: 1, Pos: 0, Blocks: []int32{7, 1, 1}}, // position 0; extra entries not copied
	}
	p, err := planKV(s, spans, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	want := kvPlan{
		slot: []int32{5*4 + 3, 2*4 + 0, 7 * 4}, pos: []int32{3, 4, 0}, first: []int32{0, 0, 0},
		table: []int32{0, 0, 2}, tables: []int32{5, 2, 7},
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("plan %+v, want %+v", p, want)
	}
	// A window of 2: position 4 sees 3 and 4; the entry of block 0 may be
	// anything once the window has left it.
	p, err = planKV(s, []compute.SeqSpan{{Row: 0, N: 2, Pos: 8, Blocks: []int32{-1, 3, 6}}}, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.first, []int32{7, 8}) || !reflect.DeepEqual(p.slot, []int32{6 * 4, 6*4 + 1}) {
		t.Errorf("window plan %+v", p)
	}
	for _, bad := range []struct {
		name  string
		spans []compute.SeqSpan
	}{
		{"short table", []compute.SeqSpan{{N: 2, Pos: 3, Blocks: []int32{1}}}},
		{"block out of range", []compute.SeqSpan{{N: 1, Pos: 0, Blocks: []int32{8}}}},
		{"negative block", []compute.SeqSpan{{N: 1, Pos: 5, Blocks: []int32{0, -1}}}},
	} {
		if _, err := planKV(s, bad.spans, 0, false); err == nil {
			t.Errorf("%s: accepted", bad.name)
		}
	}
	// A store touches only its own positions' blocks: the freed entries
	// before them may be anything, but the written block must be valid.
	if _, err := planKV(s, []compute.SeqSpan{{N: 1, Pos: 9, Blocks: []int32{-1, -1, 4}}}, 0, true); err != nil {
		t.Errorf("store past freed blocks: %v", err)
	}
	if _, err := planKV(s, []compute.SeqSpan{{N: 1, Pos: 9, Blocks: []int32{0, 0, -1}}}, 0, true); err == nil {
		t.Error("a store into block -1 was accepted")
	}
}

func TestCheckRows(t *testing.T) {
	ok := []compute.SeqSpan{{Row: 0, N: 2}, {Row: 2, N: 3}}
	if err := checkRows(ok, 5); err != nil {
		t.Error(err)
	}
	if err := checkRows(ok, 6); err == nil || !strings.Contains(err.Error(), "cover 5 rows") {
		t.Errorf("short cover: %v", err)
	}
	if err := checkRows([]compute.SeqSpan{{Row: 1, N: 1}}, 2); err == nil {
		t.Error("a gap was accepted")
	}
}

// TestPlanGemm checks the column-major reading of out = x·Wᵀ against a
// plain matrix product done the way cuBLAS indexes its operands.
func TestPlanGemm(t *testing.T) {
	const rows, cols, n = 3, 4, 2
	w := make([]float32, rows*cols) // row-major rows × cols
	x := make([]float32, n*cols)    // row-major n × cols
	for i := range w {
		w[i] = float32(i%5) - 2
	}
	for i := range x {
		x[i] = float32(i%3) + 0.5
	}
	g := planGemm(rows, cols, n, rows)
	// cuBLAS: C[i + j*ldc] = Σ_l op(A)[i,l] · op(B)[l,j], op(A)[i,l] =
	// A[l + i*lda] (transposed), op(B)[l,j] = B[l + j*ldb].
	out := make([]float32, n*rows)
	for i := 0; i < g.m; i++ {
		for j := 0; j < g.n; j++ {
			var s float32
			for l := 0; l < g.k; l++ {
				s += w[l+i*g.lda] * x[l+j*g.ldb]
			}
			out[i+j*g.ldc] = s
		}
	}
	for r := 0; r < n; r++ {
		for c := 0; c < rows; c++ {
			var s float32
			for l := 0; l < cols; l++ {
				s += x[r*cols+l] * w[c*cols+l]
			}
			if out[r*rows+c] != s {
				t.Fatalf("out[%d][%d] = %v, want %v", r, c, out[r*rows+c], s)
			}
		}
	}
	if g.transA != 1 || g.transB != 0 {
		t.Errorf("transposes %+v", g)
	}
}

func TestChunks(t *testing.T) {
	if got := chunks(19); !reflect.DeepEqual(got, [][2]int{{0, 8}, {8, 8}, {16, 3}}) {
		t.Errorf("chunks(19) = %v", got)
	}
	if got := chunks(0); got != nil {
		t.Errorf("chunks(0) = %v", got)
	}
}

func TestDeviceFormat(t *testing.T) {
	for _, tc := range []struct {
		t      dtype.Type
		native bool
		mv, dq string
	}{
		{dtype.Q4_K, true, "hx_mv_q4_k", "hx_dq32_q4_k"},
		{dtype.Q8_0, true, "hx_mv_q8_0", "hx_dq32_q8_0"},
		{dtype.F16, true, "hx_mv_f16", ""},
		{dtype.Q3_K, false, "hx_mv_f16", ""},
		{dtype.BF16, false, "hx_mv_f16", ""},
		{dtype.F32, true, "hx_mv_f32", ""},
	} {
		f := deviceFormat(tc.t)
		if f.native != tc.native || f.mvKernel() != tc.mv || f.dqKernel() != tc.dq {
			t.Errorf("%s: %+v (%s, %s)", tc.t, f, f.mvKernel(), f.dqKernel())
		}
	}
}

// TestHostF16 converts a Q4_1 weight (no kernel of its own) and checks it
// against the dequantizer, and the device size of both kinds of weight.
func TestHostF16(t *testing.T) {
	const cols, rows = 64, 3
	src := make([]float32, cols*rows)
	for i := range src {
		src[i] = float32(math.Sin(float64(i)))
	}
	rb, _ := dtype.Q4_1.RowBytes(cols)
	data := make([]byte, rb*rows)
	if err := quant.Quantize(dtype.Q4_1, src, data); err != nil {
		t.Fatal(err)
	}
	w, err := compute.NewWeight("w", dtype.Q4_1, []int{cols, rows}, data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := hostF16(w)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float32, cols*rows)
	if err := quant.Dequantize(dtype.Q4_1, data, want); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != quant.Float32ToFP16(want[i]) {
			t.Fatalf("element %d: %#x, want F16 of %v", i, got[i], want[i])
		}
	}
	if deviceBytes(w) != cols*rows*2 {
		t.Errorf("device bytes %d", deviceBytes(w))
	}
	rb8, _ := dtype.Q8_0.RowBytes(cols)
	data8 := make([]byte, rb8*rows)
	if err := quant.Quantize(dtype.Q8_0, src, data8); err != nil {
		t.Fatal(err)
	}
	q, err := compute.NewWeight("q", dtype.Q8_0, []int{cols, rows}, data8)
	if err != nil {
		t.Fatal(err)
	}
	if deviceBytes(q) != int64(len(data8)) {
		t.Errorf("a native weight takes %d bytes on the device, want its %d", deviceBytes(q), len(data8))
	}
}

func TestPlanSplits(t *testing.T) {
	long := []compute.SeqSpan{{N: 1, Pos: 999}} // decode at position 999: 1000 positions
	for _, tc := range []struct {
		name          string
		spans         []compute.SeqSpan
		window, pairs int
		chunk, splits int
		longest       int // the positions the splits must cover
	}{
		{"short context", []compute.SeqSpan{{N: 1, Pos: 100}}, 0, 16, 15, 7, 101},
		{"shortest split", []compute.SeqSpan{{N: 1, Pos: 31}}, 0, 16, 16, 2, 32},
		{"too short to split", []compute.SeqSpan{{N: 1, Pos: 15}}, 0, 16, 16, 1, 16},
		{"long decode", long, 0, 16, 32, 32, 1000},
		{"eight streams", long, 0, 128, 250, 4, 1000},
		{"many pairs", long, 0, 512, 1000, 1, 1000},
		{"window bounds it", long, 100, 16, 15, 7, 100},
		{"very long", []compute.SeqSpan{{N: 1, Pos: 99999}}, 0, 8, 1563, 64, 100000},
		{"longest span counts", []compute.SeqSpan{{N: 1, Pos: 10}, {Row: 1, N: 2, Pos: 298}}, 0, 32, 19, 16, 300},
	} {
		chunk, splits := planSplits(tc.spans, tc.window, tc.pairs)
		if chunk != tc.chunk || splits != tc.splits {
			t.Errorf("%s: chunk %d, %d splits; want %d, %d", tc.name, chunk, splits, tc.chunk, tc.splits)
		}
		if chunk*splits < tc.longest {
			t.Errorf("%s: %d splits of %d do not cover %d positions", tc.name, splits, chunk, tc.longest)
		}
	}
}

// TestWeightBytes: the emulated backend counts what its weights take on
// the device: the file's bytes for a native type, F16 for a converted one.
func TestWeightBytes(t *testing.T) {
	const cols, rows = 64, 3
	src := make([]float32, cols*rows)
	for i := range src {
		src[i] = float32(math.Cos(float64(i)))
	}
	var want int64
	b := OpenEmulated(1 << 24)
	defer b.Close()
	for _, typ := range []dtype.Type{dtype.Q8_0, dtype.Q4_1} {
		rb, _ := typ.RowBytes(cols)
		data := make([]byte, rb*rows)
		if err := quant.Quantize(typ, src, data); err != nil {
			t.Fatal(err)
		}
		w, err := compute.NewWeight(typ.String(), typ, []int{cols, rows}, data)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Prepare(w); err != nil {
			t.Fatal(err)
		}
		want += deviceBytes(w)
	}
	if got := b.WeightBytes(); got != want || want != 3*34*2+cols*rows*2 {
		t.Errorf("weights take %d device bytes, want %d", got, want)
	}
}

func TestGroupJobs(t *testing.T) {
	q4, q6 := format{native: true, suffix: "q4_k"}, format{native: true, suffix: "q6_k"}
	jobs := []mvJob{{wp: 1, f: q4}, {wp: 2, f: q6}, {wp: 3, f: q4}, {wp: 4, f: q4}, {wp: 5, f: q4}, {wp: 6, f: q6}}
	var got [][]int
	for _, g := range groupJobs(jobs) {
		var ids []int
		for _, j := range g {
			ids = append(ids, int(j.wp))
		}
		got = append(got, ids)
	}
	want := [][]int{{1, 3, 4}, {2, 6}, {5}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("groups %v, want %v", got, want)
	}
}

// TestTallMatVecDispatch: a product of one activation row with a weight of
// tallRows rows or more (an output head) goes to hx_mv2, two rows a warp;
// shorter weights and several activation rows stay with hx_mv.
func TestTallMatVecDispatch(t *testing.T) {
	const cols = 32
	for _, tc := range []struct {
		rows, nx int
		want     string
	}{
		{tallRows, 1, fmt.Sprintf("launch hx_mv2_q8_0 %d", tallRows/8)},
		{tallRows + 3, 1, fmt.Sprintf("launch hx_mv2_q8_0 %d", tallRows/8+1)},
		{tallRows - 1, 1, fmt.Sprintf("launch hx_mv_q8_0 %d", tallRows/4)},
		{tallRows, 2, fmt.Sprintf("launch hx_mv_q8_0 %d", tallRows/4)},
	} {
		ld := &logDriver{}
		b := newBackend(ld)
		w, err := compute.NewWeight("head", dtype.Q8_0, []int{cols, tc.rows}, make([]byte, tc.rows*34))
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Prepare(w); err != nil {
			t.Fatal(err)
		}
		x, err := b.NewTensor(tc.nx, cols)
		if err != nil {
			t.Fatal(err)
		}
		out, err := b.NewTensor(tc.nx, tc.rows)
		if err != nil {
			t.Fatal(err)
		}
		ld.log = nil
		if err := b.MatMul(w, x, out); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, l := range ld.log {
			found = found || strings.HasPrefix(l, tc.want+" ")
		}
		if !found {
			t.Errorf("%d rows × %d: launched %q, want %q", tc.rows, tc.nx, ld.log, tc.want)
		}
	}
}
