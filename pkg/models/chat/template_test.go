package chat

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
)

// testVars are the variables of the table-driven template tests; the JSON
// key order (z before a) is part of what is tested.
const testVars = `{"x": null, "s": "y", "m": {"k": null, "z": 1},
  "d": {"z": 1, "a": [1, 2.5, "é", {"q": true}], "m": null}}`

func renderWith(t *testing.T, src, vars string) (string, error) {
	t.Helper()
	tpl, err := Compile(src)
	if err != nil {
		return "", err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(vars), &raw); err != nil {
		t.Fatalf("vars: %v", err)
	}
	kw := map[string]any{}
	for k, v := range raw {
		kw[k] = v
	}
	return tpl.Render(context.Background(), Input{Messages: json.RawMessage(`[]`), Kwargs: kw})
}

func TestTemplateSemantics(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"percent tuple", `{{ '%s and %d' % ('a', 3) }}`, "a and 3"},
		{"percent single", `{{ 'x=%s' % s }}`, "x=y"},
		{"percent flags", `{{ '%r|%5.2f|%-4s|%03d|%%' % (s, 3.14159, 'ab', 7) }}`, "'y'| 3.14|ab  |007|%"},
		{"percent mapping", `{{ '%(a)s-%(b)s' % {'a': 1, 'b': 2} }}`, "1-2"},
		{"percent none", `{{ '%s' % x }}`, "None"},
		{"modulo numbers", `{{ -7 % 3 }} {{ 7.5 % 2 }}`, "2 1.5"},
		{"power", `{{ 2 ** 10 }} {{ 2 ** -1 }}`, "1024 0.5"},
		{"padding methods", "[{{ 'ab'.center(6) }}][{{ 'ab'.ljust(4) }}][{{ 'ab'.rjust(4, '*') }}][{{ 'a\tb'.expandtabs(4) }}][{{ 'a\tb'.expandtabs() }}]", "[  ab  ][ab  ][**ab][a   b][a       b]"},
		{"floor division", `{{ 7 // 2 }} {{ -7 // 2 }}`, "3 -4"},
		{"replace two args", `{{ 'a-b-c'.replace('-', '+') }}`, "a+b+c"},
		{"replace count", `{{ 'a-b-c'.replace('-', '+', 1) }}`, "a+b-c"},
		{"none literal", `[{{ none }}][{{ None }}]`, "[None][None]"},
		{"none variable", `[{{ x }}][{{ undefined_var }}]`, "[None][]"},
		{"none attribute", `[{{ m.k }}][{{ m.missing }}][{{ m['k'] }}][{{ m['missing'] }}]`, "[None][][None][]"},
		{"none method result", `[{{ m.get('k') }}]`, "[None]"},
		{"defined", `{{ x is defined }} {{ m.k is defined }} {{ m.missing is defined }} {{ m['k'] is defined }}`, "True True False True"},
		{"undefined", `{{ y is undefined }} {{ x is undefined }} {{ not q is defined }}`, "True False True"},
		{"none tests", `{{ x is none }} {{ x is not none }} {{ none is none }} {{ x is false }}`, "True False True False"},
		{"dict items order", `{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}`, "z=1;a=[1, 2.5, 'é', {'q': True}];m=None;"},
		{"items filter order", `{% for k, v in d | items %}{{ k }};{% endfor %}`, "z;a;m;"},
		{"dict iteration order", `{% for k in d %}{{ k }}{% endfor %}`, "zam"},
		{"keys values", `{{ d.keys() | join(',') }} {{ m.values() | list | length }}`, "z,a,m 2"},
		{"get default", `{{ m.get('k2', 'dflt') }} {{ m.get('z') }}`, "dflt 1"},
		{"strip", `[{{ "  x \n".strip() }}][{{ "xxhixx".strip("x") }}][{{ "\n\nab".lstrip('\n') }}][{{ "ab  ".rstrip() }}]`, "[x][hi][ab][ab]"},
		{"split", `{{ "a b  c".split() }} {{ "a,b".split(",") }} {{ "a,b,c".split(",", 1) }} {{ "a,b,c".rsplit(",", 1) }}`, "['a', 'b', 'c'] ['a', 'b'] ['a', 'b,c'] ['a,b', 'c']"},
		{"split negative index", `{{ 'a</think>b'.split('</think>')[-1] }} {{ 'ab'.split('<think>')[-1] }}`, "b ab"},
		{"affixes", `{{ 'abc'.startswith(('x','a')) }} {{ 'abc'.endswith('bc') }} {{ 'abc'.startswith('b') }}`, "True True False"},
		{"case", `{{ 'AbC'.lower() }} {{ 'abc'.upper() }} {{ 'hello world'.title() }} {{ 'hELLO'.capitalize() }}`, "abc ABC Hello World Hello"},
		{"in operator", `{{ 'b' in 'abc' }} {{ 'k' in m }} {{ 3 in [1,3] }} {{ 'q' not in m }}`, "True True True True"},
		{"negative index", `{{ [1,2,3][-1] }} {{ ['a'][-1] }} {{ 'abc'[-1] }} [{{ [1][5] }}]`, "3 a c []"},
		{"nested access", `{{ d.a[3].q }} {{ d['a'][3]['q'] }}`, "True True"},
		{"break", `{% for v in [1,2,3,4] %}{% if v == 3 %}{% break %}{% endif %}{{ v }}{% endfor %}`, "12"},
		{"continue", `{% for v in [1,2,3,4] %}{% if v == 3 %}{% continue %}{% endif %}{{ v }}{% endfor %}`, "124"},
		{"loop vars", `{% for v in 'ab' %}{{ loop.index0 }}{{ loop.first }}{{ loop.last }};{% endfor %}`, "0TrueFalse;1FalseTrue;"},
		{"generation block", `{% generation %}hi {{ s }}{% endgeneration %}`, "hi y"},
		{"trim and lstrip blocks", "  {% if true %}\nx\n  {% endif %}\ny", "x\ny"},
		{"no trailing newline", "a\n", "a"},
		{"namespace", `{% set ns = namespace(a=1) %}{% set ns.a = ns.a + 1 %}{{ ns.a }}`, "2"},
		{"inline if", `{{ 'a' if x else 'b' }}{% set v = s if s else 'alt' %}{{ v }}`, "by"},
		{"nested conditional", `{{ 'p' + (s if x else 'b') + '|' + ('t' if s else 'f') }}`, "pb|t"},
		{"conditional in call and list", `{{ [1 if x else 2, (3 if s)] }} {{ 'a,b'.split(',' if s else ';') | length }}`, "[2, 3] 2"},
		{"conditional without else", `[{{ ('a' if x) }}]`, "[]"},
		{"chained conditional", `{{ 'a' if x else 'b' if not s else 'c' }}|{{ ['a' if x else 'b' if x else 'c'] }}`, "c|['c']"},
		{"conditional in subscript and macro default", `{% macro f(v='d' if s else 'e') %}{{ v }}{% endmacro %}{{ f() }}{{ 'xyz'[1 if s else 0] }}`, "dy"},
		{"set without else", `{% set v = 'w' if x %}[{{ v }}]{% set v = 'z' if s %}[{{ v }}]`, "[][z]"},
		{"conditional in dict and kwarg", `{{ {'k': 'v' if s else 'w'} | tojson(indent=(2 if x else none)) }}`, `{"k": "v"}`},
		{"nested conditionals", `{{ ('a' if x else ('b' if not s else ('c' if s else 'd'))) }}`, "c"},
		{"lazy branches", `{{ ('ok' if s else raise_exception('evaluated')) }}`, "ok"},
		{"conditional with filter and string if", `{{ (s | upper if 'if' in 'gif' else 'else') }}`, "Y"},
		{"for loop filter untouched", `{% for v in [1,2,3] if v != 2 %}{{ v }}{% endfor %}`, "13"},
		{"bools and floats", `{{ true }} {{ 1.5 }} {{ 1e20 }}`, "True 1.5 1e+20"},
		{"tojson default", `{{ d | tojson }}`, `{"z": 1, "a": [1, 2.5, "é", {"q": true}], "m": null}`},
		{"tojson indent", `{{ m | tojson(indent=2) }}`, "{\n  \"k\": null,\n  \"z\": 1\n}"},
		{"string concat", `{{ 'a' + s + 'b' }} {{ [1] + [2] }}`, "ayb [1, 2]"},
		{"macro", `{%- macro f(a) -%}[{{ a }}]{%- endmacro -%}{{ f(s) }}`, "[y]"},
		{"filters", `{{ [3,1,2] | sort | join(',') }} {{ d.a | length }} {{ ['a','code_interpreter'] | reject('equalto', 'code_interpreter') | join }}`, "1,2,3 4 a"},
		{"mapping and iterable", `{{ m is mapping }} {{ s is mapping }} {{ s is iterable }} {{ s is string }}`, "True False True True"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := renderWith(t, c.src, testVars)
			if err != nil {
				t.Fatalf("%s: %v", c.src, err)
			}
			if got != c.want {
				t.Errorf("%s\n got: %q\nwant: %q", c.src, got, c.want)
			}
		})
	}
}

func TestTemplateErrors(t *testing.T) {
	cases := []struct {
		name, src string
		raised    string // non-empty: a TemplateError with this message
		compile   bool   // the error comes from Compile
	}{
		{"raise_exception", `a{{ raise_exception('boom: ' + s) }}`, "boom: y", false},
		{"raise in loop", `{% for v in [1,2] %}{% if v == 2 %}{{ raise_exception('two') }}{% endif %}{% endfor %}`, "two", false},
		{"modulo by zero", `{{ 1 % 0 }}`, "", false},
		{"bad percent", `{{ '%s %s' % s }}`, "", false},
		{"unknown filter", `{{ s | nosuchfilter }}`, "", false},
		{"syntax", `{% if %}`, "", true},
		{"unclosed", `{% for v in d %}`, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tpl, err := Compile(c.src)
			if c.compile {
				if err == nil || !errors.Is(err, ErrTemplate) {
					t.Fatalf("want a compile error wrapping ErrTemplate, got %v", err)
				}
				if strings.Contains(err.Error(), c.src) {
					t.Errorf("error repeats the template source: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			out, err := tpl.Render(context.Background(), Input{Kwargs: map[string]any{"s": "y"}})
			if err == nil {
				t.Fatalf("want an error, got output %q", out)
			}
			var te *TemplateError
			if c.raised != "" {
				if !errors.As(err, &te) || te.Message != c.raised {
					t.Fatalf("want TemplateError %q, got %v", c.raised, err)
				}
				return
			}
			if !errors.Is(err, ErrTemplate) || errors.As(err, &te) {
				t.Fatalf("want ErrTemplate, got %v", err)
			}
		})
	}
}

func TestRenderInputs(t *testing.T) {
	tpl, err := Compile(`{{ messages | length }}|{{ tools }}|{{ add_generation_prompt }}|{{ documents }}|{{ n }}|{{ flag }}|{{ mp | tojson }}|{{ lst | tojson }}`)
	if err != nil {
		t.Fatal(err)
	}
	in := Input{
		Messages:            json.RawMessage(`[{"role":"user","content":"hi"}]`),
		AddGenerationPrompt: true,
		Kwargs: map[string]any{
			"n": int64(3), "flag": false,
			"mp":  map[string]any{"b": 1, "a": []string{"x"}}, // Go maps: sorted keys
			"lst": []int32{1, 2},
		},
	}
	got, err := tpl.Render(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	want := `1|None|True|None|3|False|{"a": ["x"], "b": 1}|[1, 2]`
	if got != want {
		t.Errorf("got %q want %q", got, want)
	}

	bad := []Input{
		{Messages: json.RawMessage(`{"role":"user"}`)},
		{Messages: json.RawMessage(`[`)},
		{Messages: json.RawMessage(`[]`), Tools: json.RawMessage(`"x"`)},
		{Kwargs: map[string]any{"c": make(chan int)}},
	}
	for i, in := range bad {
		if _, err := tpl.Render(context.Background(), in); !errors.Is(err, ErrTemplate) {
			t.Errorf("bad input %d: want ErrTemplate, got %v", i, err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tpl.Render(ctx, Input{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: got %v", err)
	}
}

func TestChatMLFallback(t *testing.T) {
	tpl, err := Compile(ChatML)
	if err != nil {
		t.Fatal(err)
	}
	msgs := json.RawMessage(`[{"role":"system","content":"S"},{"role":"user","content":"U"}]`)
	for _, gen := range []bool{false, true} {
		got, err := tpl.Render(context.Background(), Input{Messages: msgs, AddGenerationPrompt: gen})
		if err != nil {
			t.Fatal(err)
		}
		want := "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n"
		if gen {
			want += "<|im_start|>assistant\n"
		}
		if got != want {
			t.Errorf("gen=%v: got %q want %q", gen, got, want)
		}
	}
}

// TestConcurrentRender renders one Template from many goroutines (run with
// -race to check that rendering shares no mutable state).
func TestConcurrentRender(t *testing.T) {
	tpl, err := Compile(`{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{{ m.content }}{% endfor %}{{ ns.n }}`)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msgs, _ := json.Marshal([]map[string]string{{"content": strings.Repeat("x", i)}})
			got, err := tpl.Render(context.Background(), Input{Messages: msgs})
			if want := strings.Repeat("x", i) + "1"; err != nil || got != want {
				t.Errorf("goroutine %d: got %q, %v; want %q", i, got, err, want)
			}
		}()
	}
	wg.Wait()
}
