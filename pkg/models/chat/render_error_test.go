package chat

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestRenderErrorMessages: render errors name the line and the innermost
// cause, without the engine's nested expression dump or our internal filters.
func TestRenderErrorMessages(t *testing.T) {
	cases := []struct{ src, want string }{
		{"{% for m in messages %}\n{{ m.content.split('') }}{% endfor %}", "chat template: line 2: invalid call to method 'split' of hi: empty separator"},
		{"{% for m in messages %}\n{% set x = m.content.split('') %}{% endfor %}", "chat template: line 2: invalid call to method 'split' of hi: empty separator"},
		{"{{ messages | tojson(foo=1) }}", "chat template: line 1: filter tojson: tojson() got an unexpected keyword argument 'foo'"},
		{"{{ messages | nosuch }}", "chat template: line 1: filter nosuch: filter 'nosuch' not found"},
		{"\n\n{{ 1 // 0 }}", "chat template: line 3: integer division or modulo by zero"},
		{"{{ x.y.z }}", "chat template: line 1: Unable to evaluate x.y: can't use Getitem on None"},
		// string literals with escapes and line continuations keep the line count
		{"{{ 'a\\nb\\nc' }}\n{{ 1 // 0 }}", "chat template: line 2: integer division or modulo by zero"},
		{"{{ 'a\\\nb' }}\n{{ 1 // 0 }}", "chat template: line 3: integer division or modulo by zero"},
		{"{{ 'a\nb\\t' }}\n{{ 1 // 0 }}", "chat template: line 3: integer division or modulo by zero"},
		{"{% set x = 'a\\\nb' if true else 'c' %}\n{{ 1 // 0 }}", "chat template: line 3: integer division or modulo by zero"},
	}
	msgs := json.RawMessage(`[{"role":"user","content":"hi"}]`)
	for _, c := range cases {
		tpl, err := Compile(c.src)
		if err != nil {
			t.Fatalf("compile %q: %v", c.src, err)
		}
		_, err = tpl.Render(context.Background(), Input{Messages: msgs})
		if !errors.Is(err, ErrTemplate) || err.Error() != c.want {
			t.Errorf("%q:\n got: %v\nwant: %s", c.src, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "__py_") {
			t.Errorf("%q: internal filter name in %v", c.src, err)
		}
	}
}

func TestRenderMessageUnknownShape(t *testing.T) {
	if got := renderMessage("unable to execute template: something else"); got != "something else" {
		t.Errorf("got %q", got)
	}
}
