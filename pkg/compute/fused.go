package compute

import "fmt"

// FusedBackend is a backend that runs some pairs of operations as one
// (a GPU pays for every launch, hundreds of times per decode step): an
// optional extension; architectures fall back to the separate operations.
// Each gives exactly what the operations it stands for give.
type FusedBackend interface {
	// AddRMSNorm is Add(x, y), then RMSNorm(x, w, eps, out).
	AddRMSNorm(x, y Tensor, w *Vector, eps float32, out Tensor)
	// RMSNormPair is RMSNorm(x1, w1, eps, out1) and RMSNorm(x2, w2, eps,
	// out2), for weights of one width.
	RMSNormPair(x1 Tensor, w1 *Vector, out1 Tensor, x2 Tensor, w2 *Vector, out2 Tensor, eps float32)
	// RoPEPairStoreKV is RoPE(q, pos, qHeads, headDim, r), RoPE(k, pos,
	// kHeads, headDim, r) and StoreKV(kv, layer, spans, k, v).
	RoPEPairStoreKV(q, k, v Tensor, pos []int32, qHeads, kHeads, headDim int, r *Rope, kv KV, layer int, spans []SeqSpan)
	// GatedMatMul writes SwiGLU(gate·x, up·x) into h, as MatMul(gate, x,
	// g), MatMul(up, x, u) and SwiGLU(g, u, h) do; g and u may be left
	// unwritten.
	GatedMatMul(gate, up *Weight, x, g, u, h Tensor) error
}

// NormRoPEBackend is a backend that runs a layer's per-head query and key
// norms together with their rotations and the KV store (one launch on a
// GPU): an optional extension.
type NormRoPEBackend interface {
	// NormRoPEPairStoreKV is RMSNormPair over the heads of q (weight qNorm)
	// and of k (kNorm), in place, then RoPEPairStoreKV; both weights are
	// headDim wide.
	NormRoPEPairStoreKV(q, k, v Tensor, qNorm, kNorm *Vector, eps float32, pos []int32, qHeads, kHeads, headDim int,
		r *Rope, kv KV, layer int, spans []SeqSpan)
}

// ArgMaxBackend is a backend that finds each row's greedy token where the
// logits are, so that only token ids cross to the host (a GPU): an
// optional extension.
type ArgMaxBackend interface {
	// ArgMaxRows writes into out[i] the index of the largest finite value
	// of row rows[i] of t (the lowest index on ties), or -1 when the row
	// has none.
	ArgMaxRows(t Tensor, rows []int32, out []int32) error
}

// CheckArgMaxRows is the argument check every ArgMaxRows makes: out has
// room for a token per row, and each row is one of t's.
func CheckArgMaxRows(t Tensor, rows, out []int32) error {
	if len(out) < len(rows) {
		return fmt.Errorf("argmax of %d rows into %d values", len(rows), len(out))
	}
	for _, r := range rows {
		if r < 0 || int(r) >= t.Rows() {
			return fmt.Errorf("argmax of row %d of a %d × %d tensor", r, t.Rows(), t.Cols())
		}
	}
	return nil
}
