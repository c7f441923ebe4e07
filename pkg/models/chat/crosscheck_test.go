package chat

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestJinja2CrossCheck renders templates whose expected output was produced
// by Python Jinja2 in Hugging Face's environment (testdata/render_hf.py).
func TestJinja2CrossCheck(t *testing.T) {
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return data
	}
	for _, name := range []string{"gemma3", "misc"} {
		t.Run(name, func(t *testing.T) {
			tpl, err := Compile(string(read(name + ".jinja")))
			if err != nil {
				t.Fatal(err)
			}
			want := read(name + ".expected")
			if want == nil {
				t.Fatalf("%s.expected missing", name)
			}
			got, err := tpl.Render(context.Background(), Input{
				Messages:            read(name + ".messages.json"),
				Tools:               read(name + ".tools.json"),
				AddGenerationPrompt: true,
				Kwargs:              map[string]any{"bos_token": "<bos>", "eos_token": "</s>"},
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("\n got: %q\nwant: %q", got, want)
			}
		})
	}
}
