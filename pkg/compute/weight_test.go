package compute

import (
	"testing"

	"github.com/helexa/helexa/pkg/dtype"
)

func TestNewWeight(t *testing.T) {
	tests := []struct {
		name string
		typ  dtype.Type
		dims []int
		size int
		ok   bool
	}{
		{"f32 matrix", dtype.F32, []int{4, 3}, 48, true},
		{"q8_0 experts", dtype.Q8_0, []int{32, 2, 3}, 6 * 34, true},
		{"short data", dtype.F32, []int{4, 3}, 44, false},
		{"partial block", dtype.Q8_0, []int{16, 2}, 34, false},
		{"activation type", dtype.Q8_K, []int{256}, 292, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := NewWeight("w", tt.typ, tt.dims, make([]byte, tt.size))
			if (err == nil) != tt.ok {
				t.Fatalf("err %v, want ok=%v", err, tt.ok)
			}
			if err == nil && len(tt.dims) == 3 {
				m := w.Mat(2)
				if m.Rows() != tt.dims[1] || len(m.Data) != tt.size/tt.dims[2] {
					t.Errorf("Mat(2): %d rows, %d bytes", m.Rows(), len(m.Data))
				}
			}
		})
	}
}
