package chat

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestContainerText: ~ and the string filter show lists and dicts as
// Python's str() does (None inside prints None); expected values are Python
// Jinja2's output.
func TestContainerText(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"string filter", `{{ {'a': none, 'b': [1, 'x', 2.0, true]} | string }}`, `{'a': None, 'b': [1, 'x', 2.0, True]}`},
		{"string filter on a list", `{{ [1, 'a', none] | string }}`, `[1, 'a', None]`},
		{"tilde", `{{ 'args: ' ~ {'k': [none]} }}`, `args: {'k': [None]}`},
		{"tilde scalars", `{{ 1.0 ~ '' }}|{{ true ~ '' }}|{{ 'x' ~ 2 }}|{{ 2.50 | string }}`, `1.0|True|x2|2.5`},
		{"tilde undefined", `{{ nope ~ 'x' }}|{{ nope | string }}`, `x|`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tpl, err := Compile(c.src)
			if err != nil {
				t.Fatalf("compile %q: %v", c.src, err)
			}
			got, err := tpl.Render(context.Background(), Input{})
			if err != nil || got != c.want {
				t.Errorf("%q\n got: %q, %v\nwant: %q", c.src, got, err, c.want)
			}
		})
	}
}

// TestMultiply: * follows Python (expected values are Jinja2's output);
// a negative count used to panic inside the engine.
func TestMultiply(t *testing.T) {
	cases := []struct{ src, want string }{
		{`{{ 'x' * -1 }}|{{ 'ab' * 3 }}|{{ 3 * '-' }}|{{ 'x' * 0 }}`, "|ababab|---|"},
		{`{{ [1, none] * 2 }}|{{ 2 * 3 }}|{{ 2 * 1.5 }}`, "[1, None, 1, None]|6|3.0"},
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
	for _, src := range []string{`{{ 'x' * 'y' }}`, `{{ {} * 2 }}`, `{{ 'x' * 100000000000 }}`} {
		tpl, err := Compile(src)
		if err != nil {
			t.Fatalf("compile %q: %v", src, err)
		}
		if _, err := tpl.Render(context.Background(), Input{}); !errors.Is(err, ErrTemplate) {
			t.Errorf("%s: want ErrTemplate, got %v", src, err)
		}
	}
}

// TestRenderPanicRecovered: a panic inside the engine (its cycler() with no
// items indexes an empty slice) becomes an ErrTemplate error.
func TestRenderPanicRecovered(t *testing.T) {
	tpl, err := Compile(`a{{ cycler() }}`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := tpl.Render(context.Background(), Input{})
	if !errors.Is(err, ErrTemplate) || !strings.Contains(err.Error(), "panicked") || out != "" {
		t.Fatalf("want a recovered panic as ErrTemplate, got %q, %v", out, err)
	}
	// rendering goes on working after a recovered panic
	tpl, err = Compile(`{{ 'ok' }}`)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := tpl.Render(context.Background(), Input{}); err != nil || out != "ok" {
		t.Fatalf("after a panic: %q, %v", out, err)
	}
}

// TestTrim: Jinja's trim turns any value into text first (Llama 3.x
// templates trim message content, which may be a list of parts).
func TestTrim(t *testing.T) {
	cases := []struct{ src, want string }{
		{`[{{ '  a b \n' | trim }}]`, "[a b]"},
		{`[{{ 'xxaxx' | trim('x') }}][{{ 'xxaxx' | trim(chars='x') }}]`, "[a][a]"},
		{`[{{ [{'type': 'text', 'text': ' hi '}] | trim }}]`, "[[{'type': 'text', 'text': ' hi '}]]"},
		{`[{{ 3 | trim }}][{{ nope | trim }}]`, "[3][]"},
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

// TestReverseAndRound: reverse keeps the order reversed (the engine sorted it)
// and round is Python's; expected values are Jinja2's output.
func TestReverseAndRound(t *testing.T) {
	cases := []struct{ src, want string }{
		{`{{ [3,1,2] | reverse | list }}|{{ 'abé' | reverse }}|{{ {'b': 1, 'a': 2} | reverse | list }}|{{ [none, 'x'] | reverse | list }}`,
			"[2, 1, 3]|éba|['a', 'b']|['x', None]"},
		{`{{ 2.5 | round }}|{{ 3.5 | round }}|{{ 5 | round }}|{{ 2.675 | round(2) }}|{{ 1234.5 | round(-2) }}`, "2.0|4.0|5|2.67|1200.0"},
		{`{{ 2.1 | round(method='ceil') }}|{{ 2.9 | round(0, 'floor') }}|{{ 5 | round(method='floor') }}|{{ -2.5 | round }}`, "3.0|2.0|5.0|-2.0"},
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
	for _, src := range []string{`{{ 1 | reverse }}`, `{{ 'x' | round }}`, `{{ 1.5 | round(method='up') }}`} {
		tpl, err := Compile(src)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tpl.Render(context.Background(), Input{}); !errors.Is(err, ErrTemplate) {
			t.Errorf("%s: want ErrTemplate, got %v", src, err)
		}
	}
}
