package tokenizer

import (
	"strings"
	"testing"
	"unsafe"
)

// TestWordCacheOwnsKeys: cached words are copies (a slice of the prompt
// would keep the whole prompt alive) and long words are not cached.
func TestWordCacheOwnsKeys(t *testing.T) {
	tk := loadGGUF(t, "tokenizer", "vocab-qwen3.gguf")
	long := strings.Repeat("x", maxCachedWord+1)
	tests := []struct {
		name, text string
		cached     []string
		notCached  []string
	}{
		{"short words", "zebra quagga okapi", []string{"zebra", " quagga", " okapi"}, nil},
		{"long word", "tapir " + long, []string{"tapir"}, []string{" " + long}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Clone(tc.text)
			ids, err := tk.Encode(text, false, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := tk.Decode(ids); got != text {
				t.Fatalf("round trip: %q", got)
			}
			lo := uintptr(unsafe.Pointer(unsafe.StringData(text)))
			hi := lo + uintptr(len(text))
			tk.cache.mu.RLock()
			defer tk.cache.mu.RUnlock()
			for _, w := range tc.cached {
				if _, ok := tk.cache.m[w]; !ok {
					t.Errorf("%q not cached", w)
				}
			}
			for _, w := range tc.notCached {
				if _, ok := tk.cache.m[w]; ok {
					t.Errorf("%q (%d bytes) cached", w[:8], len(w))
				}
			}
			for k := range tk.cache.m {
				if p := uintptr(unsafe.Pointer(unsafe.StringData(k))); p >= lo && p < hi {
					t.Errorf("cache key %q points into the encoded text", k)
				}
			}
		})
	}
}
