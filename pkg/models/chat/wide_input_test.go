package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestWideInputLinear: a tool schema with 10 000 properties decodes,
// iterates (items(), dictsort, for k in d) and looks its keys up (d[k],
// d.get(k), a missing key) in time linear in its size; the quadratic paths
// took 5 to 17 s here.
func TestWideInputLinear(t *testing.T) {
	props := map[string]any{}
	for i := range 10_000 {
		props[fmt.Sprintf("p%05d", i)] = map[string]any{"type": "string", "description": fmt.Sprint("number ", i)}
	}
	tools, err := json.Marshal([]any{map[string]any{"type": "function", "function": map[string]any{
		"name": "wide", "parameters": map[string]any{"type": "object", "properties": props}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{
		`{% for t in tools %}{% for k, v in t.function.parameters.properties.items() %}{{ k }}={{ v.description }};{% endfor %}{% endfor %}`,
		`{% for t in tools %}{% for k, v in t.function.parameters.properties|dictsort %}{{ k }}={{ v.description }};{% endfor %}{% endfor %}`,
		`{% set p = tools[0].function.parameters.properties %}{% for k in p %}{{ k }}={{ p[k].description }};{% endfor %}`,
		`{% set p = tools[0].function.parameters.properties %}{% for k in p %}{{ k }}={{ p.get(k).description }};{% if p.get(k ~ 'x') %}!{% endif %}{% endfor %}`,
	} {
		tp, err := Compile(src)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		out, err := tp.Render(context.Background(), Input{Messages: limitMessages, Tools: tools})
		if took := time.Since(start); err != nil || took > 3*time.Second {
			t.Fatalf("%.60s: %v after %v; want it rendered within 3 s", src, err, took)
		}
		if !strings.HasPrefix(out, "p00000=number 0;p00001=number 1;") || strings.Count(out, ";") != 10_000 {
			t.Fatalf("%.60s: rendered %.80q… (%d properties)", src, out, strings.Count(out, ";"))
		}
	}
}

// TestRepeatedJSONKey: a key given twice in the input keeps its first
// place and its last value, as Python's json.loads does.
func TestRepeatedJSONKey(t *testing.T) {
	tp, err := Compile(`{% for k, v in messages[0].items() %}{{ k }}={{ v }};{% endfor %}`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := tp.Render(context.Background(), Input{Messages: json.RawMessage(`[{"role":"user","content":"a","role":"assistant"}]`)})
	if err != nil || out != "role=assistant;content=a;" {
		t.Fatalf("got %q, %v", out, err)
	}
}
