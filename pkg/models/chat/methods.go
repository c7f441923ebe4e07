package chat

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/helexa/helexa/internal/jinja/exec"
)

type dictMethod = exec.Method[map[string]any]

// pyDictMethods replace the engine's dict methods, which lose the key order
// (the engine hands them a Go map copy): these work on the value itself.
func pyDictMethods() map[string]dictMethod {
	return map[string]dictMethod{
		"items": func(_ map[string]any, self *exec.Value, va *exec.VarArgs) (any, error) {
			if err := noArguments("items", va); err != nil {
				return nil, err
			}
			return dictItems(self), nil
		},
		"keys": func(_ map[string]any, self *exec.Value, va *exec.VarArgs) (any, error) {
			if err := noArguments("keys", va); err != nil {
				return nil, err
			}
			var out []any
			iterateItems(self, func(k, _ *exec.Value) bool { out = append(out, k.Interface()); return true })
			return orEmpty(out), nil
		},
		"values": func(_ map[string]any, self *exec.Value, va *exec.VarArgs) (any, error) {
			if err := noArguments("values", va); err != nil {
				return nil, err
			}
			var out []any
			iterateItems(self, func(_, v *exec.Value) bool { out = append(out, v.Interface()); return true })
			return orEmpty(out), nil
		},
		"get": func(_ map[string]any, self *exec.Value, va *exec.VarArgs) (any, error) {
			a, err := takeArgs("get", va, "key", "default")
			if err != nil {
				return nil, err
			}
			if v, ok := lookupKey(self, a[0]); ok {
				return v.Interface(), nil
			}
			if a[1] == nil {
				return nil, nil
			}
			return a[1].Interface(), nil
		},
		"copy": func(_ map[string]any, self *exec.Value, va *exec.VarArgs) (any, error) {
			if err := noArguments("copy", va); err != nil {
				return nil, err
			}
			d := exec.NewDict()
			iterateItems(self, func(k, v *exec.Value) bool {
				d.Pairs = append(d.Pairs, &exec.Pair{Key: k, Value: v})
				return true
			})
			return d, nil
		},
		"pop":        unsafeMethod[map[string]any]("dict", "pop"),
		"popitem":    unsafeMethod[map[string]any]("dict", "popitem"),
		"setdefault": unsafeMethod[map[string]any]("dict", "setdefault"),
		"update":     unsafeMethod[map[string]any]("dict", "update"),
		"clear":      unsafeMethod[map[string]any]("dict", "clear"),
	}
}

// ErrUnsafe is what a template gets for calling a method that mutates a
// list or dict: transformers renders in Jinja's ImmutableSandboxedEnvironment,
// which raises SecurityError for them, so helexa does too.
var ErrUnsafe = errors.New("unsafe")

// unsafeMethod raises like Jinja's immutable sandbox does.
func unsafeMethod[T any](typ, name string) exec.Method[T] {
	return func(T, *exec.Value, *exec.VarArgs) (any, error) {
		return nil, fmt.Errorf("%w: access to attribute '%s' of '%s' object is unsafe", ErrUnsafe, name, typ)
	}
}

// pyListMethods are the list methods: copy, and the mutating ones the
// immutable sandbox forbids.
func pyListMethods() map[string]exec.Method[[]any] {
	out := map[string]exec.Method[[]any]{}
	for _, name := range []string{"append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort"} {
		out[name] = unsafeMethod[[]any]("list", name)
	}
	return out
}

func noArguments(name string, va *exec.VarArgs) error {
	if len(va.Args)+len(va.KwArgs) > 0 {
		return fmt.Errorf("%s() takes no arguments", name)
	}
	return nil
}

func orEmpty(s []any) []any {
	if s == nil {
		return []any{}
	}
	return s
}

// dictItems returns a mapping's (key, value) pairs in order.
func dictItems(self *exec.Value) []any {
	out := []any{}
	iterateItems(self, func(k, v *exec.Value) bool {
		out = append(out, []any{k.Interface(), v.Interface()})
		return true
	})
	return out
}

// lookupKey finds key in a mapping (ordered dict or Go map).
func lookupKey(container, key *exec.Value) (*exec.Value, bool) {
	if key == nil {
		return nil, false
	}
	if d, ok := container.Interface().(*exec.Dict); ok {
		return d.Lookup(key)
	}
	rv := reflect.Indirect(container.Val)
	if rv.Kind() == reflect.Map && key.Val.IsValid() && key.Val.Type().AssignableTo(rv.Type().Key()) {
		if v := rv.MapIndex(key.Val); v.IsValid() {
			return exec.ToValue(v), true
		}
	}
	return nil, false
}
