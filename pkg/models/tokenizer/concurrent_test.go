package tokenizer

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentEncode: one Tokenizer encodes and decodes from many
// goroutines at once (word cache, scratch pool, lazy piece table) with the
// same results as alone. Run with -race.
func TestConcurrentEncode(t *testing.T) {
	for _, vocab := range []string{"vocab-qwen3.gguf", "ggml-vocab-llama-spm.gguf", "ggml-vocab-deepseek-llm.gguf"} {
		t.Run(vocab, func(t *testing.T) {
			tk := loadGGUF(t, "tokenizer", vocab)
			texts := make([]string, 8)
			want := make([][]int32, len(texts))
			for i := range texts {
				texts[i] = strings.Repeat(fmt.Sprintf("word%d naïve 東京 %d<|im_end|> ", i, i*7919), 20+i)
				ids, err := tk.Encode(texts[i], true, i%2 == 0)
				if err != nil {
					t.Fatal(err)
				}
				want[i] = ids
			}
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := range 20 {
						i := (g + r) % len(texts)
						got, err := tk.Encode(texts[i], true, i%2 == 0)
						if err != nil || !equalIDs(got, want[i]) {
							t.Errorf("goroutine %d text %d: %v", g, i, err)
							return
						}
						d := tk.NewDecoder()
						var sb strings.Builder
						for _, id := range got {
							sb.WriteString(d.Add(id))
						}
						sb.WriteString(d.Flush())
						if sb.String() != tk.Decode(got) {
							t.Errorf("goroutine %d text %d: stream and decode differ", g, i)
							return
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}
