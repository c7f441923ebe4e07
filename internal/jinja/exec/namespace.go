package exec

import (
	"errors"
	"fmt"
	"reflect"
)

// Namespace is what namespace() returns: the only object a template may
// change ({% set ns.attr = value %}); lists and dicts are immutable, as in
// Jinja's immutable sandbox.
type Namespace map[string]any

// MaxValueDepth bounds how deeply a value stored in a namespace may nest.
// Namespaces are the only state a loop carries from one iteration to the
// next, so this is what keeps a template from building a value nested
// deeper than printing or comparing it can recurse.
const MaxValueDepth = 1000

// ErrNamespaceValue is returned for a namespace assignment that would
// make the namespace contain itself or nest past MaxValueDepth.
var ErrNamespaceValue = errors.New("value cannot be stored in the namespace")

// SetAttribute sets ns.name = value, refusing a value that contains ns
// (a cycle, which nothing that prints, compares or serialises values could
// finish) or nests deeper than MaxValueDepth.
func (ns Namespace) SetAttribute(name string, value any) error {
	w := &valueWalk{target: reflect.ValueOf(ns).Pointer(), depth: map[walkKey]int{}}
	d, cyclic := w.walk(reflect.ValueOf(value))
	switch {
	case cyclic:
		return fmt.Errorf("%w: it contains the namespace itself", ErrNamespaceValue)
	case d > MaxValueDepth:
		return fmt.Errorf("%w: it nests deeper than %d", ErrNamespaceValue, MaxValueDepth)
	}
	ns[name] = value
	return nil
}

// valueWalk measures a value's nesting and looks for one map in it. The
// graph it walks is acyclic (only namespaces can change, and they are only
// changed through SetAttribute); depth memoises shared containers.
type valueWalk struct {
	target uintptr
	depth  map[walkKey]int
}

// walkKey names a container: its kind, data pointer and (slices) length.
type walkKey struct {
	kind reflect.Kind
	ptr  uintptr
	n    int
}

var (
	typeValue = reflect.TypeFor[*Value]()
	typeDict  = reflect.TypeFor[*Dict]()
)

func (w *valueWalk) walk(v reflect.Value) (depth int, found bool) {
	for v.IsValid() && v.Kind() == reflect.Interface {
		if v.IsNil() {
			return 0, false
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		return 0, false
	}
	switch v.Type() {
	case typeValue:
		if v.IsNil() {
			return 0, false
		}
		return w.walk(v.Interface().(*Value).Val)
	case typeDict:
		if v.IsNil() {
			return 0, false
		}
		return w.memo(walkKey{reflect.Pointer, v.Pointer(), 0}, func() (int, bool) {
			deepest := 0
			for _, p := range v.Interface().(*Dict).Pairs {
				d, f := w.walk(reflect.ValueOf(p.Value))
				if f {
					return 0, true
				}
				deepest = max(deepest, d)
			}
			return deepest + 1, false
		})
	}
	switch v.Kind() {
	case reflect.Map:
		if v.Pointer() == w.target {
			return 0, true
		}
		return w.memo(walkKey{reflect.Map, v.Pointer(), 0}, func() (int, bool) {
			deepest := 0
			it := v.MapRange()
			for it.Next() {
				d, f := w.walk(it.Value())
				if f {
					return 0, true
				}
				deepest = max(deepest, d)
			}
			return deepest + 1, false
		})
	case reflect.Slice:
		if v.Len() == 0 {
			return 1, false
		}
		return w.memo(walkKey{reflect.Slice, v.Pointer(), v.Len()}, func() (int, bool) { return w.items(v) })
	case reflect.Array:
		return w.items(v)
	case reflect.Pointer:
		if v.IsNil() {
			return 0, false
		}
		return w.walk(v.Elem())
	}
	return 0, false
}

func (w *valueWalk) items(v reflect.Value) (int, bool) {
	deepest := 0
	for i := range v.Len() {
		d, f := w.walk(v.Index(i))
		if f {
			return 0, true
		}
		deepest = max(deepest, d)
	}
	return deepest + 1, false
}

func (w *valueWalk) memo(p walkKey, f func() (int, bool)) (int, bool) {
	if d, ok := w.depth[p]; ok {
		return d, false
	}
	d, found := f()
	if !found {
		w.depth[p] = d
	}
	return d, found
}
