package arch

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/dtype"
)

// TPSizeError reports a tensor-parallel size the model cannot be split
// into, with the sizes it can.
type TPSizeError struct {
	Size    int
	Allowed []int
	Why     string
}

func (e *TPSizeError) Error() string {
	s := make([]string, len(e.Allowed))
	for i, n := range e.Allowed {
		s[i] = fmt.Sprint(n)
	}
	return fmt.Sprintf("tensor-parallel size %d does not fit this model (%s); allowed sizes: %s",
		e.Size, e.Why, strings.Join(s, ", "))
}

// TPSizes lists the tensor-parallel sizes up to max the model can be split
// into: the size must divide the attention heads and the FFN width, and
// either divide the KV heads (each rank gets its own) or be a multiple of
// them (ranks sharing a KV head each keep a copy).
func (m *Model) TPSizes(max int) []int {
	var out []int
	for n := 1; n <= max; n++ {
		if m.tpReason(n) == "" {
			out = append(out, n)
		}
	}
	return out
}

// CheckTP returns a *TPSizeError when the model cannot be split into size
// ranks.
func (m *Model) CheckTP(size int) error {
	if why := m.tpReason(size); why != "" {
		return &TPSizeError{Size: size, Allowed: m.TPSizes(max(8, m.HP.NHead)), Why: why}
	}
	return nil
}

func (m *Model) tpReason(n int) string {
	hp := &m.HP
	switch {
	case n < 1:
		return "the size must be at least 1"
	case m.rec != nil && n > 1:
		return fmt.Sprintf("%s's recurrent layers are not split across ranks; run it on one rank", m.Arch)
	case hp.NHead%n != 0:
		return fmt.Sprintf("%d attention heads do not divide into %d ranks", hp.NHead, n)
	case hp.NHeadKV%n != 0 && n%hp.NHeadKV != 0:
		return fmt.Sprintf("%d KV heads neither divide into %d ranks nor are a divisor of it", hp.NHeadKV, n)
	}
	if nff := m.ffnWidth(); nff%n != 0 {
		return fmt.Sprintf("the FFN width %d does not divide into %d ranks", nff, n)
	}
	return ""
}

// ffnWidth is the hidden width of the dense FFN, or of one expert.
func (m *Model) ffnWidth() int { return m.layers[0].ffnWidth() }

// Shard returns rank's share of the model in a tensor-parallel group of
// size ranks (Megatron-style): the q, k, v, gate and up projections are
// split by output rows (whole attention heads, whole FFN columns), the
// output and down projections by input columns, so each rank computes a
// partial sum that Backend.AllReduce completes. Embeddings, norms, the
// router and the output head are shared. Row slices view the same mapped
// bytes; a column slice is copied, and dequantized to F32 when it does not
// start and end on a quantization block.
func (m *Model) Shard(rank, size int) (*Model, error) {
	if err := m.CheckTP(size); err != nil {
		return nil, err
	}
	if rank < 0 || rank >= size {
		return nil, fmt.Errorf("rank %d out of a group of %d", rank, size)
	}
	if size == 1 {
		return m, nil
	}
	hp := m.HP
	s := *m
	s.HP = m.ShardHP(size)
	hq, hkv := s.HP.NHead, s.HP.NHeadKV
	kv0 := rank * hq / (hp.NHead / hp.NHeadKV)
	s.layers = make([]layer, len(m.layers))
	sp := &shardSpans{
		q:   span{rank * hq * hp.HeadDim, hq * hp.HeadDim},
		kv:  span{kv0 * hp.HeadDim, hkv * hp.HeadDim},
		ffn: span{rank * m.ffnWidth() / size, m.ffnWidth() / size},
	}
	for i, l := range m.layers {
		var err error
		if s.layers[i], err = l.shard(sp); err != nil {
			return nil, fmt.Errorf("shard %d of %d, layer %d: %w", rank, size, i, err)
		}
	}
	return &s, nil
}

// ShardHP is the hyperparameters of one rank's shard in a group of size
// ranks (a size CheckTP accepts): its share of the attention heads, and of
// the KV heads (at least one, copied when ranks share it).
func (m *Model) ShardHP(size int) HParams {
	hp := m.HP
	if size > 1 {
		hp.NHead, hp.NHeadKV = m.HP.NHead/size, max(1, m.HP.NHeadKV/size)
	}
	return hp
}

// span is a range [off, off+n) of rows or columns.
type span struct{ off, n int }

// shardSpans are one rank's rows of the attention heads, of the KV heads
// and of the FFN.
type shardSpans struct{ q, kv, ffn span }

// rowSlice is rows [sp.off, sp.off+sp.n) of a 2-D weight, sharing its bytes.
func rowSlice(w *compute.Weight, sp span) *compute.Weight {
	if w == nil {
		return nil
	}
	rb := w.RowBytes()
	s, err := compute.NewWeight(w.Name, w.Type, []int{w.Cols(), sp.n}, w.Data[sp.off*rb:(sp.off+sp.n)*rb])
	if err != nil {
		panic(fmt.Sprintf("arch: row slice of %s: %v", w.Name, err)) // the sizes were checked
	}
	s.Mapped, s.Lookup = w.Mapped, w.Lookup
	return s
}

func vecSlice(v *compute.Vector, sp span) *compute.Vector {
	if v == nil {
		return nil
	}
	return &compute.Vector{Name: v.Name, Data: v.Data[sp.off : sp.off+sp.n]}
}

// colSlice copies columns [sp.off, sp.off+sp.n) of every row of a 2-D
// weight: the quantized blocks as they are when the range is block-aligned,
// otherwise the values dequantized to F32 (exact, but larger).
func colSlice(w *compute.Weight, sp span) (*compute.Weight, error) {
	if w == nil {
		return nil, nil
	}
	rows := w.Rows()
	off, errOff := w.Type.RowBytes(int64(sp.off))
	n, errN := w.Type.RowBytes(int64(sp.n))
	if errOff == nil && errN == nil {
		data := make([]byte, 0, int(n)*rows)
		for r := 0; r < rows; r++ {
			data = append(data, w.Row(r)[off:off+n]...)
		}
		return compute.NewWeight(w.Name, w.Type, []int{sp.n, rows}, data)
	}
	row := make([]float32, w.Cols())
	data := make([]byte, 4*sp.n*rows)
	for r := 0; r < rows; r++ {
		if err := quant.Dequantize(w.Type, w.Row(r), row); err != nil {
			return nil, fmt.Errorf("dequantizing %s for a column slice: %w", w.Name, err)
		}
		for c, v := range row[sp.off : sp.off+sp.n] {
			binary.LittleEndian.PutUint32(data[4*(r*sp.n+c):], math.Float32bits(v))
		}
	}
	return compute.NewWeight(w.Name, dtype.F32, []int{sp.n, rows}, data)
}
