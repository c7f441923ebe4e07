package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/helexa/helexa/internal/jinja/exec"
)

// decodeJSON decodes one JSON document into template values that keep the
// document's key order: objects become *exec.Dict (the engine's ordered mapping),
// arrays []any, integers int, other numbers float64, null nil.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

// maxInputDepth bounds the nesting of template inputs (encoding/json's own
// bound), so a hostile request cannot overflow the decoder's stack.
const maxInputDepth = 10000

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxInputDepth {
		return nil, fmt.Errorf("JSON nested deeper than %d", maxInputDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return decodeObject(dec, depth+1)
		case '[':
			return decodeArray(dec, depth+1)
		}
		return nil, fmt.Errorf("unexpected %q", t)
	case json.Number:
		return decodeNumber(t), nil
	default:
		return t, nil // string, bool or nil
	}
}

func decodeObject(dec *json.Decoder, depth int) (any, error) {
	pairs := []*exec.Pair{}
	seen := map[string]*exec.Pair{} // dictSet's scan would be quadratic
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("object key %v is not a string", tok)
		}
		v, err := decodeValue(dec, depth)
		if err != nil {
			return nil, err
		}
		if p, ok := seen[key]; ok { // a repeated key: the last value wins
			p.Value = exec.ToValue(v)
			continue
		}
		p := &exec.Pair{Key: exec.AsValue(key), Value: exec.ToValue(v)}
		seen[key] = p
		pairs = append(pairs, p)
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, err
	}
	return exec.NewIndexedDict(pairs), nil
}

func decodeArray(dec *json.Decoder, depth int) (any, error) {
	out := []any{}
	for dec.More() {
		v, err := decodeValue(dec, depth)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if _, err := dec.Token(); err != nil { // ']'
		return nil, err
	}
	return out, nil
}

// decodeNumber keeps integers as int (Python int) and everything else as
// float64 (Python float), so tojson writes them back the way Python would.
func decodeNumber(n json.Number) any {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return int(i)
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return f
}

// dictSet sets key in d, replacing an existing key in place (Python dict
// semantics: a repeated key keeps its first position, takes the last value).
func dictSet(d *exec.Dict, key string, v any) {
	for _, p := range d.Pairs {
		if p.Key.IsString() && p.Key.String() == key {
			p.Value = exec.ToValue(v)
			return
		}
	}
	d.Pairs = append(d.Pairs, &exec.Pair{Key: exec.AsValue(key), Value: exec.ToValue(v)})
}

// toTemplateValue converts a Go value given by a caller (Kwargs) into a
// template value: json.RawMessage is decoded with its key order, Go maps
// become ordered dicts with sorted keys, slices become []any.
func toTemplateValue(v any) (any, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		if len(t) == 0 {
			return nil, nil
		}
		return decodeJSON(t)
	case *exec.Dict, *exec.Value, string, bool, int, float64:
		return t, nil
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		d := exec.NewDict()
		for _, k := range keys {
			cv, err := toTemplateValue(t[k])
			if err != nil {
				return nil, fmt.Errorf("key %q: %w", k, err)
			}
			dictSet(d, k, cv)
		}
		return d, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			cv, err := toTemplateValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = cv
		}
		return out, nil
	}
	return convertReflect(reflect.ValueOf(v))
}

// convertReflect handles typed slices, maps and numbers of any width.
func convertReflect(rv reflect.Value) (any, error) {
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int(rv.Uint()), nil
	case reflect.Float32:
		return rv.Float(), nil
	case reflect.Slice, reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			cv, err := toTemplateValue(rv.Index(i).Interface())
			if err != nil {
				return nil, err
			}
			out[i] = cv
		}
		return out, nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return nil, fmt.Errorf("map keys of type %s are not supported", rv.Type().Key())
		}
		m := make(map[string]any, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			m[it.Key().String()] = it.Value().Interface()
		}
		return toTemplateValue(m)
	case reflect.String:
		return rv.String(), nil
	case reflect.Bool:
		return rv.Bool(), nil
	}
	return nil, fmt.Errorf("values of type %s cannot be passed to a template", rv.Type())
}
