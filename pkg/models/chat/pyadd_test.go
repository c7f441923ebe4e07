package chat

import (
	"strings"
	"testing"
)

// TestCorpusConstructs pins the constructs the conformance corpus found
// failing; the expected strings are Python Jinja2 3.1.6's output in
// transformers' environment.
func TestCorpusConstructs(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"method on parenthesised filter", `{{ (s | default('', true)).replace('y', 'z').strip() }}`, "z"},
		{"set if without else", `{% set a = (s or x) if false %}[{{ a }}]{{ a is defined }}{% set b = (s or x) if true %}[{{ b }}]`, "[]False[y]"},
		{"dictsort mapping", `{% for k, v in d | dictsort %}{{ k }};{% endfor %}{% for k, v in {'B': 1, 'a': 2} | dictsort %}{{ k }}{% endfor %}`, "a;m;z;aB"},
		{"dictsort reverse by value", `{% for k, v in {'a': 2, 'b': 1, 'c': 3} | dictsort(by='value', reverse=true) %}{{ k }}{% endfor %}`, "cab"},
		{"iterable", `{{ missing is iterable }} {{ x is iterable }} {{ m.nope is iterable }} {{ d.a is iterable }} {{ s is iterable }} {{ m.z is iterable }}`, "True False True True True False"},
		{"markup plus escapes the plain side", `{{ '<a>'|safe + '<b>' + '&'|safe + "'" }}`, "<a>&lt;b&gt;&&#39;"},
		{"plain plus", `{{ '<a>' + '<b>' }} {{ 1 + 2 }} {{ 1 + 2.5 }} {{ [1] + [2] }}`, "<a><b> 3 3.5 [1, 2]"},
		{"for over undefined", `{% for i in missing %}x{% else %}empty{% endfor %}`, "empty"},
		{"list copy", `{{ d.a.copy() | length }}`, "4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := renderWith(t, c.src, testVars)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestCorpusConstructErrors: where Python raises, helexa raises too, with
// the cause in the message.
func TestCorpusConstructErrors(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"for over None", `{% for i in x %}{% endfor %}`, "for loop: 'NoneType' object is not iterable"},
		{"for over None attribute", `{% for i in m.k %}{% endfor %}`, "'NoneType' object is not iterable"},
		{"str plus dict", `{{ s + d }}`, "unsupported operand types for +: str and dict"},
		{"tojson of a generator", `{{ d.a | map('string') | tojson }}`, "generator is not JSON serializable"},
		{"list append", `{% set _ = d.a.append(1) %}`, "access to attribute 'append' of 'list' object is unsafe"},
		{"dict pop", `{{ m.pop('z') }}`, "access to attribute 'pop' of 'dict' object is unsafe"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := renderWith(t, c.src, testVars)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error containing %q, got %v (output %q)", c.want, err, got)
			}
		})
	}
}
