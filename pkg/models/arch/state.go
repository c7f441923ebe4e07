package arch

import (
	"fmt"

	"github.com/helexa/helexa/pkg/compute"
)

// recurrentShape is the per-sequence state of a model's recurrent layers
// (nil for a transformer whose every layer attends over the KV cache).
type recurrentShape struct {
	layers int // recurrent layers
	// convLen is the convolution kernel width, convDim its channels; the
	// conv state keeps convLen-1 inputs.
	convLen, convDim int
	// heads × dim × dim is one layer's delta-rule state.
	heads, dim int
}

// State is one sequence's recurrent state in a model with recurrent
// layers: per recurrent layer, the convolution's last inputs and the
// delta-rule matrices, as tensors of the backend that made them. Unlike KV
// pages it cannot be shared or rewound: it holds the whole history, so the
// next pass over the sequence must start at Pos.
type State struct {
	conv, ssm []compute.Tensor
	// Pos is the number of positions the state has consumed.
	Pos int
}

// Recurrent reports whether the model has recurrent layers, whose
// sequences need a State in every Batch.
func (m *Model) Recurrent() bool { return m.rec != nil }

// StateBytes is the memory one sequence's State takes (0 without
// recurrent layers).
func (m *Model) StateBytes() int64 {
	r := m.rec
	if r == nil {
		return 0
	}
	return int64(r.layers) * int64((r.convLen-1)*r.convDim+r.heads*r.dim*r.dim) * 4
}

// NewState allocates a zeroed State on the backend.
func (m *Model) NewState(be compute.Backend) (*State, error) {
	r := m.rec
	if r == nil {
		return nil, fmt.Errorf("model %s has no recurrent layers", m.Arch)
	}
	s := &State{conv: make([]compute.Tensor, r.layers), ssm: make([]compute.Tensor, r.layers)}
	for i := range s.conv {
		var err error
		if s.conv[i], err = be.NewTensor(r.convLen-1, r.convDim); err == nil {
			s.ssm[i], err = be.NewTensor(r.heads*r.dim, r.dim)
		}
		if err != nil {
			s.Free(be)
			return nil, fmt.Errorf("recurrent state: %w", err)
		}
	}
	return s, s.Reset(be)
}

// Reset zeroes the state, for a sequence that starts again at position 0.
func (s *State) Reset(be compute.Backend) error {
	for _, ts := range [][]compute.Tensor{s.conv, s.ssm} {
		for _, t := range ts {
			be.Zero(t)
		}
	}
	s.Pos = 0
	return nil
}

// CopyFrom makes s a copy of src (a snapshot, or a snapshot restored): both
// states of this model, on backend be.
func (s *State) CopyFrom(be compute.Backend, src *State) error {
	if len(s.conv) != len(src.conv) || len(s.ssm) != len(src.ssm) {
		return fmt.Errorf("recurrent state of %d layers copied into one of %d", len(src.conv), len(s.conv))
	}
	for i := range s.conv {
		be.Copy(s.conv[i], src.conv[i])
		be.Copy(s.ssm[i], src.ssm[i])
	}
	s.Pos = src.Pos
	return nil
}

// Free returns the state's tensors to the backend.
func (s *State) Free(be compute.Backend) {
	for _, ts := range [][]compute.Tensor{s.conv, s.ssm} {
		for _, t := range ts {
			if t != nil {
				be.Free(t)
			}
		}
	}
	s.conv, s.ssm = nil, nil
}

// checkStates verifies that a batch carries one State per span, each at
// its span's first position.
func (m *Model) checkStates(b *Batch) error {
	if m.rec == nil {
		return nil
	}
	if len(b.States) != len(b.Spans) {
		return fmt.Errorf("%d recurrent states for %d sequences", len(b.States), len(b.Spans))
	}
	for i, s := range b.States {
		if s == nil || len(s.conv) != m.rec.layers {
			return fmt.Errorf("sequence %d has no recurrent state of this model", i)
		}
		if s.Pos != b.Spans[i].Pos {
			return fmt.Errorf("sequence %d starts at position %d but its recurrent state is at %d", i, b.Spans[i].Pos, s.Pos)
		}
	}
	return nil
}

// advanceStates records that the pass consumed every span's rows.
func (m *Model) advanceStates(b *Batch) {
	if m.rec == nil {
		return
	}
	for i, s := range b.States {
		s.Pos += b.Spans[i].N
	}
}

// layerStates fills convs and ssms with the batch's states of recurrent
// layer rl, reusing the slices' memory.
func (p *pass) layerStates(rl int) (convs, ssms []compute.Tensor) {
	convs, ssms = p.s.convs[:0], p.s.ssms[:0]
	for _, s := range p.b.States {
		convs = append(convs, s.conv[rl])
		ssms = append(ssms, s.ssm[rl])
	}
	p.s.convs, p.s.ssms = convs, ssms
	return convs, ssms
}
