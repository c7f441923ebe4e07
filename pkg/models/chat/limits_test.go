package chat

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

var limitMessages = json.RawMessage(`[{"role":"user","content":"hi"}]`)

// TestCompileLimits: templates nested past MaxParseDepth fail to compile
// with a LimitError instead of overflowing the parser's stack (n keeps
// each within MaxSourceBytes).
func TestCompileLimits(t *testing.T) {
	const n = 30_000
	cases := []struct{ name, src string }{
		{"parentheses", "{{ " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + " }}"},
		{"lists", "{{ " + strings.Repeat("[", n) + strings.Repeat("]", n) + " }}"},
		{"subscripts", "{{ x" + strings.Repeat("[x", n) + strings.Repeat("]", n) + " }}"},
		{"operator chain", "{{ 1" + strings.Repeat(" + 1", n) + " }}"},
		{"concat chain", "{{ 'a'" + strings.Repeat(" ~ 'a'", n) + " }}"},
		{"attribute chain", "{{ x" + strings.Repeat(".y", n) + " }}"},
		{"call chain", "{{ x" + strings.Repeat("()", n) + " }}"},
		{"nested if", strings.Repeat("{% if true %}", n) + strings.Repeat("{% endif %}", n)},
		{"nested for", strings.Repeat("{% for x in y %}", n) + strings.Repeat("{% endfor %}", n)},
		{"nested macro", strings.Repeat("{% macro m() %}", n) + strings.Repeat("{% endmacro %}", n)},
		{"filter arguments", "{{ x" + strings.Repeat("|f(x", n) + strings.Repeat(")", n) + " }}"},
		{"not chain", "{{ " + strings.Repeat("not (", n) + "1" + strings.Repeat(")", n) + " }}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := Compile(c.src)
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != LimitParseDepth || le.Value != MaxParseDepth {
				t.Fatalf("got %v, want a parse depth LimitError", err)
			}
			if !errors.Is(err, ErrTemplate) {
				t.Errorf("%v is not ErrTemplate", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestCompileWithinDepth: nesting below the limit still compiles and
// renders.
func TestCompileWithinDepth(t *testing.T) {
	const n = 40
	src := "{{ " + strings.Repeat("(", n) + "1" + strings.Repeat(" + 1)", n) + " }}" +
		strings.Repeat("{% if true %}", n) + "x" + strings.Repeat("{% endif %}", n)
	tpl, err := Compile(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tpl.Render(context.Background(), Input{Messages: limitMessages})
	if err != nil || got != "41x" {
		t.Fatalf("got %q, %v", got, err)
	}
}

// TestRenderLimits: hostile templates stop at a limit, with a LimitError
// naming it, in bounded time.
func TestRenderLimits(t *testing.T) {
	cases := []struct {
		name, src string
		limits    *Limits // nil: DefaultLimits
		want      string
	}{
		{"infinite recursion", `{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}`, nil, LimitCallDepth},
		{"mutual recursion", `{% macro a() %}{{ b() }}{% endmacro %}{% macro b() %}{{ a() }}{% endmacro %}{{ a() }}`, nil, LimitCallDepth},
		{"recursive loop", `{% for x in [[1]] recursive %}{{ loop([x]) }}{% endfor %}`, nil, LimitCallDepth},
		{"huge range", `{% for i in range(1000000000) %}x{% endfor %}`, nil, LimitLoopIterations},
		{"huge range length", `{{ range(1000000000000000000) | length }}`, nil, LimitLoopIterations},
		{"huge negative range", `{% for i in range(0, -9223372036854775807, -1) %}x{% endfor %}`, nil, LimitLoopIterations},
		{"nested loops", `{% for i in range(1000) %}{% for j in range(1000) %}{% for k in range(1000) %}{% endfor %}{% endfor %}{% endfor %}`, nil, LimitLoopIterations},
		{"huge output", `{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}`, nil, LimitOutputBytes},
		{"doubling string", `{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s | length }}`, nil, LimitOutputBytes},
		{"doubling concat", `{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}`, nil, LimitOutputBytes},
		{"doubling list", `{% set ns = namespace(l=[1]) %}{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}{% endfor %}`, nil, LimitLoopIterations},
		{"output in macro", `{% macro f() %}{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}{% endmacro %}{% set s = f() %}`, nil, LimitOutputBytes},
		{"shared list printed", `{% set a = ['x' * 1000] * 1000 %}{% set b = [a] * 1000 %}{{ b }}`, nil, LimitOutputBytes},
		{"shared list to JSON", `{% set a = ['x' * 1000] * 1000 %}{% set b = [a] * 1000 %}{{ b | tojson | length }}`, nil, LimitOutputBytes},
		{"shared list joined", `{% set a = ['x' * 1000] * 1000 %}{% set b = [a] * 1000 %}{{ b | join(',') | length }}`, nil, LimitOutputBytes},
		{"shared list concatenated", `{% set a = ['x' * 1000] * 1000 %}{% set b = [a] * 1000 %}{{ (b ~ '') | length }}`, nil, LimitOutputBytes},
		{"shared list as string", `{% set a = ['x' * 1000] * 1000 %}{% set b = [a] * 1000 %}{{ (b | string) | length }}`, nil, LimitOutputBytes},
		{"shared list formatted", `{% set a = ['x' * 1000] * 1000 %}{% set b = [a] * 1000 %}{{ ('%s' % [b]) | length }}`, nil, LimitOutputBytes},
		{"doubling dag", `{% set a = ['x' * 1000] %}{% set ns = namespace(l=a) %}{% for i in range(40) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l }}`, nil, LimitOutputBytes},
		{"retained strings", `{% set ns = namespace(l=[]) %}{% for i in range(1000) %}{% set ns.l = ns.l + [('a' * 1000000) ~ i] %}{% endfor %}{{ ns.l | length }}`, nil, LimitBuiltBytes},
		{"retained ranges", `{% set ns = namespace(l=[]) %}{% for i in range(1000) %}{% set ns.l = ns.l + [range(1000000)] %}{% endfor %}`, nil, LimitBuiltBytes},
		{"small built budget", `{% for m in messages %}{{ m.content.upper() }}{% endfor %}`, &Limits{BuiltBytes: 1}, LimitBuiltBytes},
		{"small call depth", `{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(20) }}`, &Limits{CallDepth: 10}, LimitCallDepth},
		{"small loop budget", `{% for i in range(5) %}{% for j in range(5) %}{% endfor %}{% endfor %}`, &Limits{LoopIterations: 20}, LimitLoopIterations},
		{"small output", `{% for m in messages %}{{ m.content * 10 }}{% endfor %}`, &Limits{OutputBytes: 10}, LimitOutputBytes},
		{"render time", `{% for i in range(1000000) %}{% for j in range(1000000) %}{% endfor %}{% endfor %}`, &Limits{RenderTime: 50 * time.Millisecond}, LimitRenderTime},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tpl, err := Compile(c.src)
			if err != nil {
				t.Fatal(err)
			}
			if c.limits != nil {
				tpl = tpl.WithLimits(*c.limits)
			}
			start := time.Now()
			out, err := tpl.Render(context.Background(), Input{Messages: limitMessages})
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != c.want {
				t.Fatalf("got %q, %v; want a %s LimitError", truncate(out), err, c.want)
			}
			if !errors.Is(err, ErrTemplate) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q should be ErrTemplate and name %q", err, c.want)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestDefaultLimitsValues: the LimitError carries the limit's value.
func TestDefaultLimitsValues(t *testing.T) {
	tpl, err := Compile(`{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tpl.Render(context.Background(), Input{Messages: limitMessages})
	var le *LimitError
	if !errors.As(err, &le) || le.Value != int64(DefaultLimits().CallDepth) {
		t.Fatalf("got %v, want call depth %d", err, DefaultLimits().CallDepth)
	}
	if want := "call depth 500"; !strings.Contains(err.Error(), want) {
		t.Errorf("%q does not say %q", err, want)
	}
}

// TestRenderCancel: a render stops promptly when its context ends, with
// the context's error, even when no limit would stop it.
func TestRenderCancel(t *testing.T) {
	endless := `{% for i in range(1000000) %}{% for j in range(1000000) %}{{ '' }}{% endfor %}{% endfor %}`
	tpl, err := Compile(endless)
	if err != nil {
		t.Fatal(err)
	}
	tpl = tpl.WithLimits(Limits{})
	cases := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 100*time.Millisecond)
		}, context.DeadlineExceeded},
		{"cancel", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled},
		{"already cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, context.Canceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := c.ctx()
			defer cancel()
			start := time.Now()
			_, err := tpl.Render(ctx, Input{Messages: limitMessages})
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("returned after %v", d)
			}
		})
	}
}

// TestWidthLimits: padding widths past the engine's bound raise instead of
// allocating gigabytes.
func TestWidthLimits(t *testing.T) {
	for _, src := range []string{
		`{{ 'x'.center(10**10) }}`,
		`{{ 'x'.ljust(10**10) }}`,
		`{{ 'x'.rjust(10**10) }}`,
		`{{ 'x'.zfill(10**10) }}`,
		`{{ 'a\tb'.expandtabs(10**10) }}`,
		`{{ '{:>10000000000}'.format(1) }}`,
		`{{ '{:.10000000000f}'.format(1.5) }}`,
		`{{ '%10000000000s' % 1 }}`,
		`{{ '%.10000000000f' % 1.5 }}`,
		`{{ 'x' | center(10**10) }}`,
		`{{ 'a\nb' | indent(10**10) }}`,
		`{{ messages | tojson(indent=10**10) }}`,
	} {
		tpl, err := Compile(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		out, err := tpl.Render(context.Background(), Input{Messages: limitMessages})
		if err == nil || !strings.Contains(err.Error(), "width") {
			t.Errorf("%s: got %d bytes, %v; want a width error", src, len(out), err)
		}
	}
}

// TestNamespaceValues: a namespace cannot be made to contain itself or a
// value nested past the engine's bound (which would overflow the stack of
// whatever prints or compares it); only namespaces accept attributes.
func TestNamespaceValues(t *testing.T) {
	cases := []struct{ src, want string }{
		{`{% set ns = namespace(a=1) %}{% set ns.self = ns %}{{ ns }}`, "contains the namespace itself"},
		{`{% set ns = namespace(a=1) %}{% set ns.l = [1, {'k': [ns]}] %}`, "contains the namespace itself"},
		{`{% set a = namespace() %}{% set b = namespace(a=a) %}{% set a.b = b %}{{ a }}`, "contains the namespace itself"},
		{`{% set ns = namespace(x=1) %}{% for i in range(5000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}`, "nests deeper than 1000"},
		{`{% set ns = namespace(x=1) %}{% for i in range(5000) %}{% set ns.x = namespace(x=ns.x) %}{% endfor %}{{ ns.x }}`, "nests deeper than 1000"},
		{`{% for m in messages %}{% set m.content = messages %}{% endfor %}{{ messages }}`, "non-namespace object"},
	}
	for _, c := range cases {
		tpl, err := Compile(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		_, err = tpl.Render(context.Background(), Input{Messages: limitMessages})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.src, err, c.want)
		}
	}
	tpl, err := Compile(`{% set ns = namespace(l=[]) %}{% for i in range(3) %}{% set ns.l = ns.l + [i] %}{% endfor %}{{ ns.l }}`)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := tpl.Render(context.Background(), Input{Messages: limitMessages}); err != nil || out != "[0, 1, 2]" {
		t.Errorf("got %q, %v", out, err)
	}
	if _, err := Compile(`{% set x[0] = 1 %}`); err == nil {
		t.Error("set on a subscript compiled")
	}
}

// TestAmplifiers: operations whose result can be much larger than their
// input refuse, before building it, a result past the engine's bounds.
func TestAmplifiers(t *testing.T) {
	const big = `{% set s = 'a ' * 8000000 %}`
	for _, src := range []string{
		big + `{{ s.replace('a', 'x' * 100) | length }}`,
		big + `{{ s | replace('a', 'x' * 100) | length }}`,
		big + `{{ ('x' * 100).join([s] * 10) | length }}`,
		big + `{{ ([s] * 100) | join('') | length }}`,
		big + `{{ s.split() | length }}`,
		big + `{{ s | list | length }}`,
		big + `{{ s.replace(' ', '
') | indent(100) | length }}`,
		big + `{{ s.replace(' ', '	').expandtabs(100) | length }}`,
		big + `{{ ('{0}' * 100).format(s) | length }}`,
		`{{ [1] | batch(100000000, 'x') | length }}`,
		`{{ [1] | slice(100000000) | length }}`,
		`{{ lipsum(n=1000000) | length }}`,
	} {
		tpl, err := Compile(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		start := time.Now()
		out, err := tpl.Render(context.Background(), Input{Messages: limitMessages})
		if err == nil || !strings.Contains(err.Error(), "allows") && !strings.Contains(err.Error(), LimitOutputBytes) {
			t.Errorf("%s: got %q, %v; want a size error", src, truncate(out), err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", src, d)
		}
	}
}

// TestDeepJSONInput: deeply nested input is refused, not a stack overflow.
func TestDeepJSONInput(t *testing.T) {
	tpl, err := Compile(`{{ messages | length }}`)
	if err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat("[", 1_000_000) + strings.Repeat("]", 1_000_000)
	if _, err := tpl.Render(context.Background(), Input{Messages: json.RawMessage(deep)}); !errors.Is(err, ErrTemplate) {
		t.Fatalf("got %v, want an ErrTemplate", err)
	}
	ok := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	if out, err := tpl.Render(context.Background(), Input{Messages: json.RawMessage(ok)}); err != nil || out != "1" {
		t.Fatalf("got %q, %v", out, err)
	}
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
