package exec

import (
	"reflect"
)

// CheckValue refuses a value whose printed form (str(), repr(), JSON)
// would be larger than the output budget, before anything builds it: a
// list that holds the same big list a thousand times is small in memory
// and gigabytes as text. The estimate counts string bytes plus a few bytes
// of punctuation per item, walking each shared container once.
func (b *Budget) CheckValue(v *Value) error {
	if b == nil || b.limits.OutputBytes <= 0 || v == nil {
		return nil
	}
	switch v.getResolvedValue().Kind() {
	case reflect.Map, reflect.Slice, reflect.Array, reflect.Struct, reflect.Pointer:
	default:
		return nil // a scalar's text is its own size
	}
	s := &sizeWalk{limit: b.limits.OutputBytes, memo: map[walkKey]int{}}
	if s.size(v.Val) > b.limits.OutputBytes {
		return b.fail(b.outputLimit())
	}
	return nil
}

// sizeWalk estimates printed sizes, saturating just above limit.
type sizeWalk struct {
	limit int
	memo  map[walkKey]int
}

// perItem is the punctuation an item adds at most: quotes, ", ", ": ".
const perItem = 6

func (s *sizeWalk) add(a, b int) int { return min(a+b, s.limit+1) }

func (s *sizeWalk) size(v reflect.Value) int {
	for v.IsValid() && v.Kind() == reflect.Interface {
		if v.IsNil() {
			return 4
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		return 4
	}
	switch v.Type() {
	case typeValue:
		if v.IsNil() {
			return 4
		}
		return s.size(v.Interface().(*Value).Val)
	case typeDict:
		if v.IsNil() {
			return 4
		}
		return s.memoized(walkKey{reflect.Pointer, v.Pointer(), 0}, func() int {
			n := 2
			for _, p := range v.Interface().(*Dict).Pairs {
				n = s.add(n, s.add(s.size(reflect.ValueOf(p.Key)), s.size(reflect.ValueOf(p.Value))+perItem))
				if n > s.limit {
					break
				}
			}
			return n
		})
	}
	switch v.Kind() {
	case reflect.String:
		return v.Len() + 2
	case reflect.Map:
		return s.memoized(walkKey{reflect.Map, v.Pointer(), 0}, func() int {
			n := 2
			it := v.MapRange()
			for it.Next() && n <= s.limit {
				n = s.add(n, s.add(s.size(it.Key()), s.size(it.Value())+perItem))
			}
			return n
		})
	case reflect.Slice:
		if v.Len() == 0 {
			return 2
		}
		return s.memoized(walkKey{reflect.Slice, v.Pointer(), v.Len()}, func() int { return s.items(v) })
	case reflect.Array:
		return s.items(v)
	case reflect.Pointer:
		if v.IsNil() {
			return 4
		}
		return s.size(v.Elem())
	}
	return 24 // numbers, booleans, functions
}

func (s *sizeWalk) items(v reflect.Value) int {
	n := 2
	for i := 0; i < v.Len() && n <= s.limit; i++ {
		n = s.add(n, s.size(v.Index(i))+perItem)
	}
	return n
}

func (s *sizeWalk) memoized(k walkKey, f func() int) int {
	if n, ok := s.memo[k]; ok {
		return n
	}
	n := f()
	s.memo[k] = n
	return n
}

// TextSize estimates the size of v's printed form (see Budget.CheckValue),
// saturating just above limit.
func TextSize(v *Value, limit int) int {
	if v == nil {
		return 4
	}
	s := &sizeWalk{limit: limit, memo: map[walkKey]int{}}
	return s.size(v.Val)
}
