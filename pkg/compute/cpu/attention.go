package cpu

import (
	"fmt"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/quant"
)

// StoreKV implements compute.Backend. Each row's heads go to their own runs of
// the store; an F16 store rounds up to storeRows rows in one call first.
func (c *Backend) StoreKV(kvs compute.KV, layer int, spans []compute.SeqSpan, kT, vT compute.Tensor) {
	kv, k, v := hostKV(kvs), host(kT), host(vT)
	d, hd := kv.KVDim, kv.headDim()
	for _, span := range spans {
		for r := 0; r < span.N; r += storeRows {
			s := compute.SeqSpan{Row: span.Row + r, N: min(storeRows, span.N-r), Pos: span.Pos + r, Blocks: span.Blocks}
			rows, vals := k[s.Row*d:(s.Row+s.N)*d], v[s.Row*d:(s.Row+s.N)*d]
			if !kv.F16 {
				scatter(kv, kv.k[layer], rows, s, hd)
				scatter(kv, kv.v[layer], vals, s, hd)
				continue
			}
			if cap(c.kv16) < len(rows) {
				c.kv16 = make([]uint16, storeRows*d)
			}
			buf := c.kv16[:len(rows)]
			c.toF16(buf, rows)
			scatter(kv, kv.k16[layer], buf, s, hd)
			c.toF16(buf, vals)
			scatter(kv, kv.v16[layer], buf, s, hd)
		}
	}
}

// storeRows is how many rows StoreKV rounds to F16 at a time: its scratch
// stays within a few hundred KB for any model.
const storeRows = 64

// scatter copies the span's rows (KVDim values each) to their heads' rows
// (hd values each) of a layer slice.
func scatter[T float32 | uint16](kv *KVCache, dst, rows []T, s compute.SeqSpan, hd int) {
	for i := 0; i < s.N; i++ {
		row := rows[i*kv.KVDim : (i+1)*kv.KVDim]
		for col := 0; col < kv.KVDim; col += hd {
			off := kv.offset(s.Blocks, s.Pos+i, col)
			copy(dst[off:off+hd], row[col:col+hd])
		}
	}
}

// toF16 rounds src to F16 bits into dst (the vector kernel when the CPU
// has it: the same rounding, to nearest even).
func (c *Backend) toF16(dst []uint16, src []float32) {
	if c.vec != vecNone {
		toF16Vec(c.vec, dst, src)
		return
	}
	for i, x := range src {
		dst[i] = quant.Float32ToFP16(x)
	}
}

// kvRow returns the d values at offset off of layer's keys (or values):
// a view of F32 storage, or F16 storage converted into buf.
func (kv *KVCache) kvRow(values bool, layer, off, d int, buf []float32) []float32 {
	if !kv.F16 {
		if values {
			return kv.v[layer][off : off+d]
		}
		return kv.k[layer][off : off+d]
	}
	src := kv.k16[layer][off : off+d]
	if values {
		src = kv.v16[layer][off : off+d]
	}
	for i, h := range src {
		buf[i] = quant.FP16ToFloat32(h)
	}
	return buf[:d]
}

// Attention implements compute.Backend: for every (query row, head) pair, scores
// against every cached position up to the row's own, softmax in F32 (sum in
// float64), weighted sum of the values.
func (c *Backend) Attention(kvs compute.KV, layer int, spans []compute.SeqSpan, a *compute.Attn, qT, outT compute.Tensor) {
	kv, q, out := hostKV(kvs), host(qT), host(outT)
	if c.vec != vecNone {
		c.attentionGroups(kv, layer, spans, a, 0, q, out)
		return
	}
	c.attendRows(kv, layer, spans, a, 0, q, out)
}

// attendRows runs attendOne for every (query row, head) pair, in parallel;
// window > 0 limits each row to its last window positions.
func (c *Backend) attendRows(kv *KVCache, layer int, spans []compute.SeqSpan, a *compute.Attn, window int, q, out []float32) {
	// flatten (span, token, head) into one index space
	starts := make([]int, len(spans)+1)
	maxCtx := 0
	for i, s := range spans {
		starts[i+1] = starts[i] + s.N*a.Heads
		maxCtx = max(maxCtx, s.Pos+s.N)
	}
	if window > 0 {
		maxCtx = min(maxCtx, window)
	}
	c.pool.parallelFor(starts[len(spans)], grain(2*maxCtx*a.HeadDim), func(lo, hi int) {
		buf := c.floats.get(maxCtx + a.HeadDim)
		defer c.floats.put(buf)
		scores, rowBuf := buf[:maxCtx], buf[maxCtx:]
		si := 0
		for idx := lo; idx < hi; idx++ {
			for idx >= starts[si+1] {
				si++
			}
			s := &spans[si]
			local := idx - starts[si]
			attendOne(kv, layer, s, a, window, local/a.Heads, local%a.Heads, q, out, scores, rowBuf)
		}
	})
}

// attentionGroups is Attention with the C vector kernel, one task per
// (KV head, tile of query rows), ordered by KV head: the query heads
// sharing a KV head read its keys and values once per tile, from cache. A
// tile is attendTileRows consecutive rows of a span (prefill), or one row.
// window > 0 limits each row to its last window positions.
func (c *Backend) attentionGroups(kv *KVCache, layer int, spans []compute.SeqSpan, a *compute.Attn, window int, q, out []float32) {
	g, d := a.Heads/a.KVHeads, a.HeadDim
	width := a.Heads * d
	tile := max(1, attendTileRows(g, d))
	tiles := func(s *compute.SeqSpan) int { return (s.N + tile - 1) / tile }
	starts := make([]int, len(spans)+1)
	ctx, rows := 0, 1 // the most positions and query rows one task reads
	for i := range spans {
		starts[i+1] = starts[i] + tiles(&spans[i])*a.KVHeads
		ctx = max(ctx, spans[i].Pos+spans[i].N)
		if tile > 1 && spans[i].N >= tile {
			rows = tile
		}
	}
	if window > 0 {
		ctx = min(ctx, window+tile)
	}
	c.pool.parallelFor(starts[len(spans)], grain(2*g*rows*ctx*d), func(lo, hi int) {
		scores := c.floats.get(g * rows * ctx)
		defer c.floats.put(scores)
		si := 0
		for idx := lo; idx < hi; idx++ {
			for idx >= starts[si+1] {
				si++
			}
			s := &spans[si]
			// KV head major: one worker runs a run of tiles against the
			// same head, whose keys and values stay in its cache
			local := idx - starts[si]
			nt := tiles(s)
			kvh, t0 := local/nt, local%nt*tile
			off := kvh * g * d
			if t0+tile <= s.N && tile > 1 {
				row := (s.Row + t0) * width
				attendTile(c.vec, kv, layer, s.Blocks, kvh, g, d, tile, s.Pos+t0+1, window, width, a.Scale, q[row+off:], out[row+off:], scores)
				continue
			}
			for tok := t0; tok < min(s.N, t0+tile); tok++ {
				row := (s.Row + tok) * width
				n := s.Pos + tok + 1
				first := windowFirst(n, window)
				attendGroup(c.vec, kv, layer, s.Blocks, kvh, g, d, n, first, a.Scale, q[row+off:row+off+g*d], out[row+off:row+off+g*d], scores)
			}
		}
	})
}

// windowFirst is the first of n cached positions a query sees: 0, or the
// start of its last window when window > 0.
func windowFirst(n, window int) int {
	if window > 0 {
		return max(0, n-window)
	}
	return 0
}

// hostKV returns a KV store this backend made.
func hostKV(kv compute.KV) *KVCache {
	c, ok := kv.(*KVCache)
	if !ok {
		panic(fmt.Sprintf("cpu: KV store %T does not belong to the CPU backend", kv))
	}
	return c
}

// attendOne computes one head of one query row over the cached positions
// up to its own (the last window of them when window > 0).
func attendOne(kv *KVCache, layer int, s *compute.SeqSpan, a *compute.Attn, window, tok, h int, q, out, scores, rowBuf []float32) {
	d := a.HeadDim
	width := a.Heads * d
	row := s.Row + tok
	qv := q[row*width+h*d : row*width+(h+1)*d]
	ov := out[row*width+h*d : row*width+(h+1)*d]
	kvh := h / (a.Heads / a.KVHeads)
	n := s.Pos + tok + 1
	first := windowFirst(n, window)
	sc := scores[:n-first]
	for j := first; j < n; j++ {
		kr := kv.kvRow(false, layer, kv.offset(s.Blocks, j, kvh*d), d, rowBuf)
		var dot float32
		for i, x := range qv {
			dot += x * kr[i]
		}
		sc[j-first] = dot
	}
	compute.Softmax(sc, sc, a.Scale)
	for i := range ov {
		ov[i] = 0
	}
	for j, w := range sc {
		vr := kv.kvRow(true, layer, kv.offset(s.Blocks, first+j, kvh*d), d, rowBuf)
		for i, x := range vr {
			ov[i] += w * x
		}
	}
}
