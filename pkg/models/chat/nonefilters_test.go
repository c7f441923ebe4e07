package chat

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// TestNoneAwareFilters: string and length tell None from undefined as
// Jinja2 does (expected values are Python Jinja2 3.1.6's output; "error"
// cases raise TypeError there).
func TestNoneAwareFilters(t *testing.T) {
	msgs := json.RawMessage(`[{"role": "user", "content": null}]`)
	cases := []struct {
		name, src, want string
		wantErr         bool
	}{
		{"string of names", `{% set x = none %}{{ x | string }}|{{ nope | string }}|{{ none | string }}`, "None||None", false},
		{"string of attrs and items", `{{ messages[0].content | string }}|{{ messages[0]['content'] | string }}|{{ messages[0].missing | string }}|{{ messages[0]['missing'] | string }}`, "None|None||", false},
		{"string of loop values", `{% for k, v in {'a': none, 'b': 1, 'c': [none]} | items %}{{ k }}={{ v | string }};{% endfor %}`, "a=None;b=1;c=[None];", false},
		{"length of undefined and containers", `{{ nope | length }}|{{ messages[0].missing | length }}|{{ 'héllo' | length }}|{{ messages | length }}|{{ {'a': 1} | count }}`, "0|0|5|1|1", false},
		{"length of a None attribute", `{{ messages[0].content | length }}`, "", true},
		{"length of a None variable", `{% set x = none %}{{ x | length }}`, "", true},
		{"length of an int", `{{ 3 | length }}`, "", true},
		{"count of a bool", `{{ true | count }}`, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tpl, err := Compile(c.src)
			if err != nil {
				t.Fatalf("compile %q: %v", c.src, err)
			}
			got, err := tpl.Render(context.Background(), Input{Messages: msgs})
			if c.wantErr {
				if !errors.Is(err, ErrTemplate) {
					t.Errorf("%q: want a render error, got %q, %v", c.src, got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("%q\n got: %q, %v\nwant: %q", c.src, got, err, c.want)
			}
		})
	}
}
