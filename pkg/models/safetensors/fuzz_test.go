package safetensors

import (
	"testing"
)

// FuzzParse feeds arbitrary bytes to the header parser: it must return a
// File or an error, never panic, and every tensor it accepts must lie
// inside the data buffer with a size matching its dtype and shape. The
// seed corpus in testdata/fuzz/FuzzParse runs with plain `go test`.
func FuzzParse(f *testing.F) {
	f.Add(image(f, smallWriter(f)))
	f.Add(withHeader(`{"t": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}}`, 2))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := FromBytes("fuzz", data)
		if err != nil {
			return
		}
		end := int64(-1)
		for _, ti := range file.Tensors() {
			d := file.TensorData(ti)
			if int64(len(d)) != ti.Size() || ti.Begin < 8 || ti.End > int64(len(data)) {
				t.Fatalf("tensor %q: range [%d, %d) of %d bytes", ti.Name, ti.Begin, ti.End, len(data))
			}
			if ti.Begin < end {
				t.Fatalf("tensor %q overlaps its predecessor", ti.Name)
			}
			end = ti.End
			if _, err := ti.Type(); err != nil && ti.DType == "F32" {
				t.Fatalf("F32 tensor rejected: %v", err)
			}
		}
	})
}
