package cuda

import (
	"fmt"

	"github.com/helexa/helexa/pkg/compute"
)

// kvPlan is the host half of StoreKV and Attention for one batch: for
// every row, the slot its key and value go to, its position, the first
// position it sees, and where its sequence's block table starts in
// tables (the tables of all sequences, concatenated).
type kvPlan struct {
	slot, pos, first, table []int32
	tables                  []int32
}

// planKV packs spans for a store of shape s. window > 0 limits each row to
// its last window positions (a sliding-window store, whose table entries
// before the window may be anything); store plans a StoreKV, which touches
// only the blocks of the rows' own positions. Every block a row reads or
// writes is checked here, so that a bad table is an error on the host,
// never an illegal address on the device.
func planKV(s compute.KVShape, spans []compute.SeqSpan, window int, store bool) (kvPlan, error) {
	var p kvPlan
	for _, sp := range spans {
		var err error
		switch {
		case store:
			err = s.CheckWindowSpan(sp, 1) // the blocks of [Pos, Pos+N)
		case window > 0:
			err = s.CheckWindowSpan(sp, window)
		default:
			err = s.CheckSpan(sp)
		}
		if err != nil {
			return kvPlan{}, err
		}
		off := int32(len(p.tables))
		need := (sp.Pos + sp.N + s.BlockSize - 1) / s.BlockSize
		p.tables = append(p.tables, sp.Blocks[:need]...)
		for i := 0; i < sp.N; i++ {
			pos := sp.Pos + i
			first := 0
			if window > 0 {
				first = max(0, pos-window+1)
			}
			b := sp.Blocks[pos/s.BlockSize]
			p.slot = append(p.slot, b*int32(s.BlockSize)+int32(pos%s.BlockSize))
			p.pos = append(p.pos, int32(pos))
			p.first = append(p.first, int32(first))
			p.table = append(p.table, off)
		}
	}
	return p, nil
}

// rows is the number of batch rows the plan covers.
func (p *kvPlan) rows() int { return len(p.pos) }

// checkRows fails when the spans do not cover exactly the tensor's rows
// in order (rows [0, n) each once).
func checkRows(spans []compute.SeqSpan, n int) error {
	next := 0
	for _, sp := range spans {
		if sp.Row != next || sp.N < 0 {
			return fmt.Errorf("span at row %d (%d rows) after row %d: spans must cover the batch in order", sp.Row, sp.N, next)
		}
		next += sp.N
	}
	if next != n {
		return fmt.Errorf("spans cover %d rows of a %d-row batch", next, n)
	}
	return nil
}

// gemm is one cuBLAS GemmEx call in column-major terms for out = x·Wᵀ
// with row-major x (n × k), W (m × k) and out (n × m): cuBLAS sees W as a
// k × m column-major matrix (transposed: op(A) is m × k), x as k × n, and
// writes out as an m × n column-major matrix, which is out row-major.
type gemm struct {
	transA, transB int // cublasOperation_t: 0 = N, 1 = T
	m, n, k        int
	lda, ldb, ldc  int
}

// planGemm plans out = x·Wᵀ for W rows × cols, x n × cols and out rows
// ldo values apart.
func planGemm(rows, cols, n, ldo int) gemm {
	return gemm{transA: 1, transB: 0, m: rows, n: n, k: cols, lda: cols, ldb: cols, ldc: ldo}
}

// mvMaxRows is the most activation rows one matvec launch takes (its
// kernels keep one partial sum per row in registers).
const mvMaxRows = 8

// gemmMinRows is the batch from which a matmul dequantizes the weight and
// runs a GEMM instead of matvec launches.
const gemmMinRows = 17

// chunks splits n activation rows into matvec launches of at most
// mvMaxRows: the first row and the count of each.
func chunks(n int) [][2]int {
	var out [][2]int
	for lo := 0; lo < n; lo += mvMaxRows {
		out = append(out, [2]int{lo, min(mvMaxRows, n-lo)})
	}
	return out
}

// planKey identifies a kvPlan by everything it depends on, so that the
// layers of one pass, which share their spans, upload the plan once.
func planKey(spans []compute.SeqSpan, window int, store bool) []int32 {
	k := []int32{int32(window), 0}
	if store {
		k[1] = 1
	}
	for _, sp := range spans {
		k = append(k, int32(sp.Row), int32(sp.N), int32(sp.Pos), int32(len(sp.Blocks)))
		k = append(k, sp.Blocks...)
	}
	return k
}

// Split decode attention: when a batch has few (row, head) pairs, each
// pair's positions are shared out to several blocks of about
// splitPositions, enough that the batch fills about splitBlocks blocks
// (at most maxSplits per pair), and a second kernel merges their partial
// softmaxes: one block walking a whole context one chunk after another is
// a chain of dependent loads, and a decode step has only one block per head.
const (
	splitPositions = 16
	splitBlocks    = 512
	maxSplits      = 64
)

// planSplits picks the split of attention over spans (window > 0: a
// sliding window) for a batch of pairs (row, head) pairs: chunk positions
// per block and the number of splits (1: no split).
func planSplits(spans []compute.SeqSpan, window, pairs int) (chunk, splits int) {
	longest := 0
	for _, sp := range spans {
		n := sp.Pos + sp.N // the last row sees positions [0, Pos+N)
		if window > 0 {
			n = min(n, window)
		}
		longest = max(longest, n)
	}
	splits = min((longest+splitPositions-1)/splitPositions, (splitBlocks+pairs-1)/max(pairs, 1), maxSplits)
	if splits <= 1 {
		return longest, 1
	}
	chunk = (longest + splits - 1) / splits
	return chunk, (longest + chunk - 1) / chunk
}
