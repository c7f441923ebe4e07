package loader

import (
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/models/gguf"
	"github.com/helexa/helexa/pkg/models/tokenizer"
)

// Llama 3 ids of the control tokens these tests use.
const (
	llamaPythonTag   = 128010 // <|python_tag|>
	llamaEOT         = 128009 // <|eot_id|>
	llamaStartHeader = 128006 // <|start_header_id|>
)

func llama3Tokenizer(t *testing.T) engineTokenizer {
	t.Helper()
	f, err := gguf.Open(fixtures.Path(t, "tokenizer", "vocab-llama3.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	tk, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	g := newEngineTokenizer(tk)
	if id, ok := tk.TokenID(pythonTag); !ok || id != llamaPythonTag || !tk.IsControl(id) {
		t.Fatalf("vocab-llama3: %s is id %d (found %v), control %v; want control id %d",
			pythonTag, id, ok, tk.IsControl(id), llamaPythonTag)
	}
	return g
}

func encodeText(t *testing.T, g engineTokenizer, text string) []int32 {
	t.Helper()
	ids, err := g.Encode(text, false, false)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func decodeAll(d engine.Decoder, ids []int32) string {
	var out string
	for _, id := range ids {
		out += d.Add(id)
	}
	return out + d.Flush()
}

func TestToolDecoderKeepsPythonTag(t *testing.T) {
	g := llama3Tokenizer(t)
	call := `brave_search.call(query="weather in Paris")`
	var ids []int32
	ids = append(ids, llamaStartHeader)
	ids = append(ids, encodeText(t, g, "Sure.")...)
	ids = append(ids, llamaPythonTag)
	ids = append(ids, encodeText(t, g, call)...)
	ids = append(ids, llamaEOT)
	cases := []struct {
		name string
		dec  engine.Decoder
		want string
	}{
		{"tool decoder", g.NewToolDecoder(), "Sure." + pythonTag + call},
		{"plain decoder", g.NewDecoder(), "Sure." + call},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := decodeAll(tc.dec, ids); got != tc.want {
				t.Errorf("decoded %q, want %q", got, tc.want)
			}
		})
	}
}

// TestToolDecoderTagAfterSplitCharacter: bytes of a character cut short by
// the tag come out before it, never after.
func TestToolDecoderTagAfterSplitCharacter(t *testing.T) {
	g := llama3Tokenizer(t)
	const char = "𝔘" // 4 bytes the vocab has no single token for
	ids := encodeText(t, g, char)
	if len(ids) < 2 {
		t.Fatalf("%q encodes as %v; the test needs a character split over tokens", char, ids)
	}
	d := g.NewToolDecoder()
	if held := d.Add(ids[0]); held != "" {
		t.Fatalf("the first piece of %q came out alone: %q", char, held)
	}
	got := d.Add(llamaPythonTag) + d.Flush()
	if want := g.t.Decode(ids[:1]) + pythonTag; got != want {
		t.Errorf("decoded %q, want %q", got, want)
	}
}

// TestDecodersKeepFamilyMarkers: a model's tool-call markers are rendered
// in tool requests only, its reasoning markers in every request, even when
// they are control tokens (the Llama 3 header token stands in for them).
func TestDecodersKeepFamilyMarkers(t *testing.T) {
	const marker = "<|start_header_id|>"
	ids := append([]int32{llamaStartHeader}, encodeText(t, llama3Tokenizer(t), "x")...)
	cases := []struct {
		name        string
		tool, think bool
		toolDecoder bool
		want        string
	}{
		{"tool marker, tool request", true, false, true, marker + "x"},
		{"tool marker, plain request", true, false, false, "x"},
		{"think marker, plain request", false, true, false, marker + "x"},
		{"no markers", false, false, true, "x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := llama3Tokenizer(t)
			if c.tool {
				g.toolMarkers = []string{marker}
			}
			if c.think {
				g.thinkMarkers = []string{marker}
			}
			d := g.NewDecoder()
			if c.toolDecoder {
				d = g.NewToolDecoder()
			}
			if got := decodeAll(d, ids); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
