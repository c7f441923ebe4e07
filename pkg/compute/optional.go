package compute

import "fmt"

// FitBackend is a backend whose memory is finite and apart from the
// host's (a GPU): an optional extension. Before the first weight is
// prepared, CheckFits fails when the model's weights and vectors would not
// fit, with an error that says by how much.
type FitBackend interface {
	CheckFits(ws []*Weight, vs []*Vector) error
}

// PinnedBackend is a backend whose calls are cheapest from one thread of
// its own (a GPU context is current on one OS thread; any other goroutine
// hands each call over to it): an optional extension. Pinned runs f on
// that thread, where the backend's calls made by f need no hand-off, and
// returns when f has; a panic in f is raised again in the caller.
type PinnedBackend interface {
	Pinned(f func())
}

// PairedMatMulBackend is a backend that multiplies several weights, each
// by its own input, in one pass: an optional extension (architectures fall
// back to one MatMul per weight). The routed experts of a few rows (decode
// steps) use it for every expert's gate and up (each over the rows routed
// to it) and then for every down: one synchronisation for all of them
// instead of one each. The CPU has it.
type PairedMatMulBackend interface {
	// MatMulPairs computes outs[i] = MatMul(ws[i], xs[i]) for every i.
	MatMulPairs(ws []*Weight, xs, outs []Tensor) error
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

// DeviceReserve is the part of a device's free memory that stays free
// for activations, scratch and the math library's workspace: a tenth, at
// least 512 MiB. A GPU backend's pre-flight (FitBackend) keeps it, and an
// executor's default KV pool takes what the weights leave less it.
func DeviceReserve(free int64) int64 { return max(free/10, 512<<20) }
