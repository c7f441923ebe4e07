package gguf

import "testing"

// BenchmarkOpenQwen3 opens a model with a 151936-token vocabulary (metadata
// parsing dominates: tensor data is only mapped).
func BenchmarkOpenQwen3(b *testing.B) {
	path := fixturePath(b, "qwen3-tiny-Q8_0.gguf")
	for b.Loop() {
		f, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		_ = f.Close()
	}
}
