package chat

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/nikolalohinski/gonja/v2/exec"
)

type dictMethod = exec.Method[map[string]any]

// pyDictMethods replace gonja's dict methods, which lose the key order
// (gonja hands them a Go map copy): these work on the value itself.
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
		"pop":        dictPop,
		"setdefault": dictSetDefault,
		"update":     dictUpdate,
	}
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
		for _, p := range d.Pairs {
			if p.Key.EqualValueTo(key) {
				return p.Value, true
			}
		}
		return nil, false
	}
	rv := reflect.Indirect(container.Val)
	if rv.Kind() == reflect.Map && key.Val.IsValid() && key.Val.Type().AssignableTo(rv.Type().Key()) {
		if v := rv.MapIndex(key.Val); v.IsValid() {
			return exec.ToValue(v), true
		}
	}
	return nil, false
}

func mutableDict(self *exec.Value, method string) (*exec.Dict, error) {
	d, ok := self.Interface().(*exec.Dict)
	if !ok {
		return nil, fmt.Errorf("%s() is not supported on this mapping", method)
	}
	return d, nil
}

func dictPop(_ map[string]any, self *exec.Value, va *exec.VarArgs) (any, error) {
	a, err := takeArgs("pop", va, "key", "default")
	if err != nil {
		return nil, err
	}
	d, err := mutableDict(self, "pop")
	if err != nil {
		return nil, err
	}
	for i, p := range d.Pairs {
		if p.Key.EqualValueTo(a[0]) {
			d.Pairs = append(d.Pairs[:i], d.Pairs[i+1:]...)
			return p.Value.Interface(), nil
		}
	}
	if a[1] == nil {
		return nil, fmt.Errorf("KeyError: %s", a[0].String())
	}
	return a[1].Interface(), nil
}

func dictSetDefault(_ map[string]any, self *exec.Value, va *exec.VarArgs) (any, error) {
	a, err := takeArgs("setdefault", va, "key", "default")
	if err != nil {
		return nil, err
	}
	if v, ok := lookupKey(self, a[0]); ok {
		return v.Interface(), nil
	}
	d, err := mutableDict(self, "setdefault")
	if err != nil {
		return nil, err
	}
	def := a[1]
	if def == nil {
		def = exec.AsValue(nil)
	}
	d.Pairs = append(d.Pairs, &exec.Pair{Key: a[0], Value: def})
	return def.Interface(), nil
}

func dictUpdate(_ map[string]any, self *exec.Value, va *exec.VarArgs) (any, error) {
	if len(va.Args) > 1 {
		return nil, errors.New("update() takes at most 1 positional argument")
	}
	d, err := mutableDict(self, "update")
	if err != nil {
		return nil, err
	}
	set := func(k, v *exec.Value) {
		for _, p := range d.Pairs {
			if p.Key.EqualValueTo(k) {
				p.Value = v
				return
			}
		}
		d.Pairs = append(d.Pairs, &exec.Pair{Key: k, Value: v})
	}
	if len(va.Args) == 1 {
		iterateItems(va.Args[0], func(k, v *exec.Value) bool { set(k, v); return true })
	}
	for _, k := range sortedKeys(va.KwArgs) {
		set(exec.AsValue(k), va.KwArgs[k])
	}
	return nil, nil
}
