package chat

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// fuzzLimits keep each fuzzed render small.
var fuzzLimits = Limits{CallDepth: 50, LoopIterations: 20_000, OutputBytes: 1 << 20, RenderTime: 2 * time.Second}

// FuzzCompileRender: whatever the template, Compile and Render return
// (an error or a result within the limits) without crashing the process,
// panicking inside the engine, or running past the render time. Plain
// go test runs the seeds.
func FuzzCompileRender(f *testing.F) {
	seeds := []string{
		ChatML,
		"{{ bos_token }}{% for m in messages %}{{ m.role }}: {{ m.content | trim }}\n{% endfor %}",
		"{% set ns = namespace(last=-1) %}{% for m in messages %}{% if m.role == 'user' %}{% set ns.last = loop.index0 %}{% endif %}{% endfor %}{{ ns.last }}",
		"{% if tools %}{{ tools | tojson(indent=2) }}{% endif %}{{ messages[-1]['content'][:3] }}",
		"{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(5) }}",
		"{{ '%s-%d' % ('a', 3) }}{{ 'x' ~ none }}{{ [1, 2] + [3] }}{{ {'a': 1}.items() | list }}",
		"{{ (messages | map(attribute='role') | join(',')).upper() }}",
		"{{ 'a' if messages else 'b' }}{{ (1 if true else 2) + 1 }}",
		"{% for x in [[1, [2]]] recursive %}{{ x }}{% if x is iterable %}{{ loop(x) }}{% endif %}{% endfor %}",
		"{{ raise_exception('no') }}",
		"{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}",
		"{% for i in range(1000000000) %}x{% endfor %}",
		"{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}",
		"{{ " + strings.Repeat("(", 1000) + "1" + strings.Repeat(")", 1000) + " }}",
		"{% if %}", "{{ }}", "{% for %}{% endfor %}", "{{ 'unterminated }}", "{% endif %}", "{{ x[ }}",
		"{{ strftime_now('%Y') }}{% generation %}g{% endgeneration %}",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	in := Input{
		Messages:            json.RawMessage(`[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f","arguments":{"a":1}}}]}]`),
		Tools:               json.RawMessage(`[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]`),
		AddGenerationPrompt: true,
		Kwargs:              map[string]any{"bos_token": "<s>"},
	}
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := Compile(src)
		if err != nil {
			return
		}
		tpl = tpl.WithLimits(fuzzLimits)
		start := time.Now()
		out, err := tpl.Render(context.Background(), in)
		if d := time.Since(start); d > fuzzLimits.RenderTime+3*time.Second {
			t.Errorf("render took %v", d)
		}
		if err != nil {
			if strings.Contains(err.Error(), "panicked") {
				t.Errorf("engine panic: %v", err)
			}
			return
		}
		if len(out) > fuzzLimits.OutputBytes {
			t.Errorf("output %d bytes, over the %d limit", len(out), fuzzLimits.OutputBytes)
		}
	})
}
