package chat

import (
	"context"
	"errors"
	"testing"
)

// TestStringLiterals: string literals decode like Jinja2's (Python
// unicode-escape rules). Expected values are Python Jinja2 3.1.6's output.
func TestStringLiterals(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"line continuation", "{{ 'a\\\nb' }}", "ab"},
		{"common escapes", `{{ "line\nnext\ttab" }}`, "line\nnext\ttab"},
		{"unknown escapes kept", `{{ '\d+\s' }}`, `\d+\s`},
		{"trailing backslash", `{{ 'a\\' }}|{{ "b\\" + 'c' }}`, `a\|b\c`},
		{"escaped quotes", `{{ 'it\'s' }} {{ "say \"hi\"" }}`, `it's say "hi"`},
		{"hex unicode octal", `{{ '\x41\u00e9\U0001F600\101' }}`, "Aé😀A"},
		{"nul counts", `{{ '\x41\u00e9\U0001F600\101\0' | length }}`, "5"},
		{"json in a literal", `{{ '{"a": "b\\"c"}' }}`, `{"a": "b\"c"}`},
		{"escape in set and call", `{% set s = 'x\ny' %}{{ s.split('\n') | length }}`, "2"},
		{"no escapes untouched", `{{ 'plain' }} {{ "no escapes" }}`, "plain no escapes"},
		{"inside a conditional", `{{ ('\n' if true else '\t') + '|' }}`, "\n|"},
		{"text outside tags untouched", "a\\nb {{ 'c\\n' }}", "a\\nb c\n"},
		{"carriage returns", "{{ 'a\r\nb\\rc' }}", "a\nb\rc"},
		{"nested braces", `{{ {'a': {'b': 'x\ty'}} }}`, `{'a': {'b': 'x\ty'}}`},
		{"comments and raw blocks untouched", `{# '\q #}{% raw %}{{ '\n' }}{% endraw %}{{ '\t' }}`, "{{ '\\n' }}\t"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tpl, err := Compile(c.src)
			if err != nil {
				t.Fatalf("compile %q: %v", c.src, err)
			}
			got, err := tpl.Render(context.Background(), Input{})
			if err != nil {
				t.Fatalf("render %q: %v", c.src, err)
			}
			if got != c.want {
				t.Errorf("%q\n got: %q\nwant: %q", c.src, got, c.want)
			}
		})
	}
}

func TestStringLiteralErrors(t *testing.T) {
	for _, src := range []string{`{{ '\x4' }}`, `{{ '\u12' }}`, `{{ '\U0011FFFF' }}`} {
		if _, err := Compile(src); !errors.Is(err, ErrTemplate) {
			t.Errorf("%s: want a compile error wrapping ErrTemplate, got %v", src, err)
		}
	}
}

// TestStringLiteralLineBreaks: a continued literal followed by a keyword
// still parses, with its value and line count right.
func TestStringLiteralLineBreaks(t *testing.T) {
	cases := []struct{ src, want string }{
		{"{{ 'a\\\nb' if true else 'c' }}", "ab"},
		{"{% set x = 'a\\\nb' %}{{ x }}", "ab"},
		{"{{ ('a\\\nb') ~ 'c\\\nd' | upper }}", "abCD"},
		{"{{ 'x\\ny\ny' }}", "x\ny\ny"},
	}
	for _, c := range cases {
		tpl, err := Compile(c.src)
		if err != nil {
			t.Fatalf("compile %q: %v", c.src, err)
		}
		if got, err := tpl.Render(context.Background(), Input{}); err != nil || got != c.want {
			t.Errorf("%q\n got: %q, %v\nwant: %q", c.src, got, err, c.want)
		}
	}
}
