package chat

import (
	"context"
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
