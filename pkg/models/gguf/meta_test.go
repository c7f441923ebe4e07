package gguf

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func metaFile(t *testing.T) *File {
	t.Helper()
	w := NewWriter()
	w.SetString("s", "text")
	w.SetUint32("u32", 7)
	w.SetInt32("neg", -3)
	w.SetUint64("big", math.MaxUint64)
	w.SetFloat32("f32", 0.5)
	w.SetBool("b", true)
	w.SetStrings("strs", []string{"x", "y"})
	w.SetInt32s("ints", []int32{1, -2})
	w.SetFloat32s("floats", []float32{0.25, 4})
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.SetValue("u8s", Value{Type: TypeArray, Elem: TypeUint8, V: []any{uint8(1), uint8(255)}}))
	must(w.SetValue("u64s", Value{Type: TypeArray, Elem: TypeUint64, V: []any{uint64(1 << 40)}}))
	must(w.SetValue("f64", Value{Type: TypeFloat64, V: 2.5}))
	must(w.SetValue("u16", Value{Type: TypeUint16, V: uint16(9)}))
	return mustParse(t, encode(t, w))
}

func TestGetters(t *testing.T) {
	f := metaFile(t)
	check := func(name string, got, want any, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	s, err := f.String("s")
	check("String", s, "text", err)
	u, err := f.Uint("u32")
	check("Uint(u32)", u, uint64(7), err)
	u, err = f.Uint("u16")
	check("Uint(u16)", u, uint64(9), err)
	u, err = f.Uint("big")
	check("Uint(big)", u, uint64(math.MaxUint64), err)
	i, err := f.Int("neg")
	check("Int(neg)", i, int64(-3), err)
	i, err = f.Int("u32")
	check("Int(u32)", i, int64(7), err)
	x, err := f.Float("f32")
	check("Float(f32)", x, 0.5, err)
	x, err = f.Float("f64")
	check("Float(f64)", x, 2.5, err)
	b, err := f.Bool("b")
	check("Bool", b, true, err)
	ss, err := f.Strings("strs")
	check("Strings", ss, []string{"x", "y"}, err)
	is, err := f.Int32s("ints")
	check("Int32s", is, []int32{1, -2}, err)
	is, err = f.Int32s("u8s")
	check("Int32s(u8s)", is, []int32{1, 255}, err)
	fs, err := f.Float32s("floats")
	check("Float32s", fs, []float32{0.25, 4}, err)
	if !f.Has("s") || f.Has("nope") {
		t.Error("Has")
	}
}

func TestGetterErrorsNameTheKey(t *testing.T) {
	f := metaFile(t)
	cases := []struct {
		key  string
		call func(string) error
		want error
	}{
		{"missing", func(k string) error { _, err := f.String(k); return err }, ErrMissingKey},
		{"u32", func(k string) error { _, err := f.String(k); return err }, ErrWrongType},
		{"neg", func(k string) error { _, err := f.Uint(k); return err }, ErrWrongType},
		{"s", func(k string) error { _, err := f.Uint(k); return err }, ErrWrongType},
		{"big", func(k string) error { _, err := f.Int(k); return err }, ErrWrongType},
		{"u32", func(k string) error { _, err := f.Float(k); return err }, ErrWrongType},
		{"u32", func(k string) error { _, err := f.Bool(k); return err }, ErrWrongType},
		{"ints", func(k string) error { _, err := f.Strings(k); return err }, ErrWrongType},
		{"s", func(k string) error { _, err := f.Strings(k); return err }, ErrWrongType},
		{"strs", func(k string) error { _, err := f.Int32s(k); return err }, ErrWrongType},
		{"u64s", func(k string) error { _, err := f.Int32s(k); return err }, ErrWrongType},
		{"strs", func(k string) error { _, err := f.Float32s(k); return err }, ErrWrongType},
		{"missing", func(k string) error { _, err := f.Float32s(k); return err }, ErrMissingKey},
	}
	for _, c := range cases {
		err := c.call(c.key)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), `"`+c.key+`"`) {
			t.Errorf("key %s: err = %v, want %v naming the key", c.key, err, c.want)
		}
	}
}

func TestOrGetters(t *testing.T) {
	f := metaFile(t)
	if f.StringOr("s", "d") != "text" || f.StringOr("u32", "d") != "d" || f.StringOr("nope", "d") != "d" {
		t.Error("StringOr")
	}
	if f.UintOr("u32", 1) != 7 || f.UintOr("nope", 1) != 1 || f.UintOr("neg", 1) != 1 {
		t.Error("UintOr")
	}
	if f.FloatOr("f32", 1) != 0.5 || f.FloatOr("nope", 1) != 1 {
		t.Error("FloatOr")
	}
	if !f.BoolOr("b", false) || !f.BoolOr("nope", true) || f.BoolOr("s", false) {
		t.Error("BoolOr")
	}
	if f.Arch() != "" {
		t.Errorf("Arch() = %q without general.architecture", f.Arch())
	}
}
