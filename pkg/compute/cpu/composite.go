package cpu

import "github.com/helexa/helexa/pkg/compute"

// The composite operations of compute.Backend, run as the operations they
// stand for, in the order their contracts name: the CPU pays nothing per
// call that fusing them would save.

// AddRMSNorm implements compute.Backend: Add, then RMSNorm.
func (c *Backend) AddRMSNorm(x, y compute.Tensor, w *compute.Vector, eps float32, out compute.Tensor) {
	c.Add(x, y)
	c.RMSNorm(x, w, eps, out)
}

// RMSNormPair implements compute.Backend: two RMSNorms.
func (c *Backend) RMSNormPair(x1 compute.Tensor, w1 *compute.Vector, out1 compute.Tensor, x2 compute.Tensor,
	w2 *compute.Vector, out2 compute.Tensor, eps float32) {
	c.RMSNorm(x1, w1, eps, out1)
	c.RMSNorm(x2, w2, eps, out2)
}

// RoPEPairStoreKV implements compute.Backend: RoPE of q, of k, then
// StoreKV.
func (c *Backend) RoPEPairStoreKV(q, k, v compute.Tensor, pos []int32, qHeads, kHeads, headDim int, r *compute.Rope,
	kv compute.KV, layer int, spans []compute.SeqSpan) {
	c.RoPE(q, pos, qHeads, headDim, r)
	c.RoPE(k, pos, kHeads, headDim, r)
	c.StoreKV(kv, layer, spans, k, v)
}

// NormRoPEPairStoreKV implements compute.Backend: the per-head norms of q
// and k in place, then RoPEPairStoreKV.
func (c *Backend) NormRoPEPairStoreKV(q, k, v compute.Tensor, qNorm, kNorm *compute.Vector, eps float32, pos []int32,
	qHeads, kHeads, headDim int, r *compute.Rope, kv compute.KV, layer int, spans []compute.SeqSpan) {
	qh, kh := c.View(q, len(pos)*qHeads, headDim), c.View(k, len(pos)*kHeads, headDim)
	c.RMSNormPair(qh, qNorm, qh, kh, kNorm, kh, eps)
	c.RoPEPairStoreKV(q, k, v, pos, qHeads, kHeads, headDim, r, kv, layer, spans)
}

// GatedMatMul implements compute.Backend: MatMuls of gate and up (x
// quantized once, one parallel loop), then SwiGLU.
func (c *Backend) GatedMatMul(gate, up *compute.Weight, x, g, u, h compute.Tensor) error {
	c.gatedW, c.gatedOut = [2]*compute.Weight{gate, up}, [2]compute.Tensor{g, u}
	err := c.MatMuls(c.gatedW[:], x, c.gatedOut[:])
	c.gatedW, c.gatedOut = [2]*compute.Weight{}, [2]compute.Tensor{} // hold no tensor past the call
	if err != nil {
		return err
	}
	c.SwiGLU(g, u, h)
	return nil
}
