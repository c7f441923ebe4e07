package emu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/compute"
)

// attnSeq is one sequence of an attention batch: N query rows at positions
// [Pos, Pos+N), over a block table (entries before the window may be -1:
// freed blocks no query may read).
type attnSeq struct {
	Pos, N int
	Table  []int32
}

// attnSeqs: a prefill chunk after some context, a decode step into its
// context, a fresh prefill and two steps far into a long context;
// non-consecutive blocks of 8 positions.
var attnSeqs = []attnSeq{
	{Pos: 13, N: 5, Table: []int32{9, 2, 5}},
	{Pos: 40, N: 1, Table: []int32{0, 11, 3, 8, 1, 6}},
	{Pos: 0, N: 3, Table: []int32{10}},
	{Pos: 150, N: 2, Table: []int32{12, 19, 26, 14, 21, 28, 16, 23, 30, 18, 25, 13, 20, 27, 15, 22, 29, 17, 24}},
}

const (
	attnBlockSize = 8
	attnBlocks    = 31
)

func TestAttention(t *testing.T) {
	tests := []struct {
		heads, kvHeads, headDim, window int
	}{
		{4, 4, 64, 0},   // MHA
		{4, 2, 128, 0},  // GQA 2
		{8, 2, 64, 0},   // GQA 4
		{2, 1, 256, 0},  // the largest head
		{2, 2, 32, 0},   // the smallest head
		{4, 1, 64, 16},  // sliding window, GQA 4
		{2, 1, 128, 5},  // a window smaller than a block
		{4, 2, 96, 100}, // a window wider than every context
		{2, 1, 4, 0},    // heads narrower than a warp
		{4, 2, 40, 0},   // not a multiple of 32
		{2, 2, 80, 7},
	}
	for _, tt := range tests {
		for _, f16 := range []bool{false, true} {
			name := fmt.Sprintf("heads=%d/%d hd=%d window=%d f16=%v", tt.heads, tt.kvHeads, tt.headDim, tt.window, f16)
			t.Run(name, func(t *testing.T) {
				testAttention(t, tt.heads, tt.kvHeads, tt.headDim, tt.window, f16)
			})
		}
	}
}

func testAttention(t *testing.T, heads, kvHeads, headDim, window int, f16 bool) {
	be := newCPU(t)
	r := rand.New(rand.NewPCG(uint64(heads*1000+kvHeads*100+headDim+window), 8))
	kvDim := kvHeads * headDim
	shape := compute.KVShape{Layers: 2, NumBlocks: attnBlocks, BlockSize: attnBlockSize, KVDim: kvDim, F16: f16}
	const layer = 1
	kv, err := be.NewKV(shape)
	if err != nil {
		t.Fatal(err)
	}
	slotsN := attnBlocks * attnBlockSize
	var kc, vc []float32
	var kh, vh []uint16
	if f16 {
		kh, vh = make([]uint16, slotsN*kvDim), make([]uint16, slotsN*kvDim)
	} else {
		kc, vc = make([]float32, slotsN*kvDim), make([]float32, slotsN*kvDim)
	}

	// every cached position of every sequence, through both stores
	for _, s := range attnSeqs {
		n := s.Pos + s.N
		k, v := randVec(r, n*kvDim, 2), randVec(r, n*kvDim, 1)
		be.StoreKV(kv, layer, []compute.SeqSpan{{Row: 0, N: n, Pos: 0, Blocks: s.Table}},
			tensor(t, be, n, kvDim, k), tensor(t, be, n, kvDim, v))
		slot := make([]int32, n)
		for p := range slot {
			slot[p] = s.Table[p/attnBlockSize]*attnBlockSize + int32(p%attnBlockSize)
		}
		if f16 {
			must(t, Launch("hx_store_kv_f16", grid1D(n*kvDim), dim(256), kh, vh, k, v, slot, n, kvDim))
		} else {
			must(t, Launch("hx_store_kv_f32", grid1D(n*kvDim), dim(256), kc, vc, k, v, slot, n, kvDim))
		}
	}

	// the query batch
	var spans []compute.SeqSpan
	var rowPos, rowFirst, rowTable, tables []int32
	rows := 0
	for _, s := range attnSeqs {
		table := append([]int32(nil), s.Table...)
		if window > 0 { // blocks before every query's window: freed
			for b := 0; b < max(0, s.Pos-window+1)/attnBlockSize; b++ {
				table[b] = -1
			}
		}
		spans = append(spans, compute.SeqSpan{Row: rows, N: s.N, Pos: s.Pos, Blocks: table})
		for i := 0; i < s.N; i++ {
			p := s.Pos + i
			first := 0
			if window > 0 {
				first = max(0, p+1-window)
			}
			rowPos, rowFirst, rowTable = append(rowPos, int32(p)), append(rowFirst, int32(first)), append(rowTable, int32(len(tables)))
		}
		tables = append(tables, table...)
		rows += s.N
	}
	width := heads * headDim
	q := randVec(r, rows*width, 1.5)
	a := &compute.Attn{Heads: heads, KVHeads: kvHeads, HeadDim: headDim, Scale: float32(1 / math.Sqrt(float64(headDim)))}
	ot := tensor(t, be, rows, width, nil)
	if window > 0 {
		be.AttentionWindow(kv, layer, spans, a, window, tensor(t, be, rows, width, q), ot)
	} else {
		be.Attention(kv, layer, spans, a, tensor(t, be, rows, width, q), ot)
	}
	want := values(t, be, ot)

	// emulated, the kernel agrees with the CPU to rounding (with an F16
	// store both read the same F16 values): 1e-5, to see small errors such
	// as one position too many with a tiny weight
	got := nanVec(rows * width)
	grid := [3]int{rows, heads, 1}
	var k, v Arg = kc, vc
	suffix := "f32"
	if f16 {
		k, v, suffix = kh, vh, "f16"
	}
	must(t, Launch("hx_attention_"+suffix, grid, dim(128), got, q, k, v, rowPos, rowFirst, rowTable, tables,
		heads, kvHeads, headDim, attnBlockSize, a.Scale))
	check(t, "attention", got, want, 1e-5, 1)

	// split decode attention: chunks of several sizes (one that leaves
	// some splits of short rows without positions), merged, give the same
	for _, chunk := range []int{1, 7, 16} {
		splits := 0
		for i, p := range rowPos {
			splits = max(splits, (int(p)-int(rowFirst[i])+chunk)/chunk)
		}
		part := nanVec(rows * heads * splits * (headDim + 2))
		counts := make([]int32, rows*heads)
		got := nanVec(rows * width)
		must(t, Launch("hx_attention_part_"+suffix, [3]int{rows, heads, splits}, dim(128), got, part, counts, q, k, v, rowPos,
			rowFirst, rowTable, tables, heads, kvHeads, headDim, attnBlockSize, a.Scale, chunk, splits))
		check(t, fmt.Sprintf("split attention (chunk %d, %d splits)", chunk, splits), got, want, 1e-5, 1)
		if slices.ContainsFunc(counts, func(c int32) bool { return c != 0 }) {
			t.Errorf("chunk %d: the split counts are left at %v, not zeros", chunk, counts)
		}
	}
}

// TestAttentionOneHot pins the paging and the head mapping exactly: the
// query of one row, head h, matches one cached key so strongly that the
// output is that position's value row of KV head h/(heads/kvHeads).
func TestAttentionOneHot(t *testing.T) {
	const heads, kvHeads, headDim, n = 4, 2, 32, 20
	table := []int32{3, 0, 2} // positions 0..7 in block 3, 8..15 in 0, 16..19 in 2
	kvDim := kvHeads * headDim
	kc, vc := make([]float32, 4*attnBlockSize*kvDim), make([]float32, 4*attnBlockSize*kvDim)
	slotOf := func(p int) int { return int(table[p/attnBlockSize])*attnBlockSize + p%attnBlockSize }
	for p := 0; p < n; p++ {
		for kh := 0; kh < kvHeads; kh++ {
			// key of position p, head kh: a one-hot at element p (the
			// query picks it); value: p + 100·kh everywhere
			base := slotOf(p)*kvDim + kh*headDim
			kc[base+p] = 1
			for i := 0; i < headDim; i++ {
				vc[base+i] = float32(p + 100*kh)
			}
		}
	}
	for _, target := range []int{0, 9, 19} {
		q := make([]float32, heads*headDim)
		for h := 0; h < heads; h++ {
			q[h*headDim+target] = 200 // softmax weight 1 (to F32 precision)
		}
		out := nanVec(heads * headDim)
		must(t, Launch("hx_attention_f32", [3]int{1, heads, 1}, dim(128), out, q, kc, vc,
			[]int32{n - 1}, []int32{0}, []int32{0}, table, heads, kvHeads, headDim, attnBlockSize, float32(1)))
		for h := 0; h < heads; h++ {
			want := float32(target + 100*(h/(heads/kvHeads)))
			for i := 0; i < headDim; i++ {
				if out[h*headDim+i] != want {
					t.Fatalf("target %d head %d elem %d: %g, want %g", target, h, i, out[h*headDim+i], want)
				}
			}
		}
	}
}

// TestAttentionBadShape: a head wider than 256 or KV heads that do not
// divide the heads trap (a sticky device failure on a GPU).
func TestAttentionBadShape(t *testing.T) {
	one := []int32{0}
	for _, shape := range [][3]int{{1, 1, 288}, {3, 2, 32}, {2, 0, 32}} {
		heads, kvHeads, hd := shape[0], shape[1], shape[2]
		kc := make([]float32, 8*max(1, kvHeads)*hd)
		err := Launch("hx_attention_f32", [3]int{1, heads, 1}, dim(128), make([]float32, heads*hd), make([]float32, heads*hd),
			kc, kc, one, one, one, one, heads, kvHeads, hd, 8, float32(1))
		if err == nil || !strings.Contains(err.Error(), "__trap()") {
			t.Errorf("heads %d/%d, head dim %d: %v, want a trap", heads, kvHeads, hd, err)
		}
	}
}
