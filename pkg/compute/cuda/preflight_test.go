package cuda

import (
	"errors"
	"testing"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/dtype"
)

func TestFits(t *testing.T) {
	for _, tc := range []struct {
		name       string
		need, free int64
		ok         bool
	}{
		{"fits", 4096, 512<<20 + 4096, true},
		{"one byte short", 4096, 512<<20 + 4095, false},
		{"a big GPU keeps a tenth", 8 << 30, 10 << 30, true},
		{"a tenth more than that", 9<<30 + 1, 10 << 30, false},
		{"nothing free", 1, 0, false},
	} {
		err := fits(tc.need, tc.free)
		if tc.ok != (err == nil) {
			t.Errorf("%s: %v", tc.name, err)
		}
		if err != nil && !errors.Is(err, ErrNoRoom) {
			t.Errorf("%s: error %v is not ErrNoRoom", tc.name, err)
		}
	}
}

// TestCheckFits counts weights as the device holds them: a Q4_1 weight
// (converted to F16) takes more than its file bytes.
func TestCheckFits(t *testing.T) {
	const cols, rows = 256, 4096 // Q4_1: 576 KiB in the file, 2 MiB as F16
	rb, _ := dtype.Q4_1.RowBytes(cols)
	data := make([]byte, rb*rows)
	if err := quant.Quantize(dtype.Q4_1, make([]float32, cols*rows), data); err != nil {
		t.Fatal(err)
	}
	w, err := compute.NewWeight("w", dtype.Q4_1, []int{cols, rows}, data)
	if err != nil {
		t.Fatal(err)
	}
	v := &compute.Vector{Name: "v", Data: make([]float32, 1024)}
	for _, tc := range []struct {
		total int64
		ok    bool
	}{
		{512<<20 + 2<<20 + 4096, true},
		{512<<20 + 2<<20 + 4095, false}, // the vector's 4 KiB no longer fit
		{512<<20 + int64(len(data)) + 4096, false},
	} {
		b := OpenEmulated(tc.total)
		err := b.CheckFits([]*compute.Weight{w}, []*compute.Vector{v})
		b.Close()
		if tc.ok != (err == nil) {
			t.Errorf("%d bytes of device memory: %v", tc.total, err)
		}
	}
}
