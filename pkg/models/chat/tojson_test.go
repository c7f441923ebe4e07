package chat

import (
	"math"
	"testing"

	"github.com/helexa/helexa/internal/jinja/exec"
)

func mustDecode(t *testing.T, s string) *exec.Value {
	t.Helper()
	v, err := decodeJSON([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return exec.ToValue(v)
}

// Expected strings are what Python's json.dumps prints.
func TestPyJSON(t *testing.T) {
	indent4 := defaultJSONOptions()
	indent4.hasIndent, indent4.indent, indent4.itemSep = true, "    ", ","
	ascii := defaultJSONOptions()
	ascii.ensureASCII = true
	sorted := defaultJSONOptions()
	sorted.sortKeys = true
	compact := defaultJSONOptions()
	compact.itemSep, compact.keySep = ",", ":"
	cases := []struct {
		name, in string
		opt      jsonOptions
		want     string
	}{
		{"scalars", `[null, true, false, 0, -12, 1.0, 2.5, 1e-7, 1e16, 123456789012, "s"]`, defaultJSONOptions(),
			`[null, true, false, 0, -12, 1.0, 2.5, 1e-07, 1e+16, 123456789012, "s"]`},
		{"key order kept", `{"z": 1, "a": 2, "m": {"y": 1, "b": 2}}`, defaultJSONOptions(), `{"z": 1, "a": 2, "m": {"y": 1, "b": 2}}`},
		{"duplicate key keeps first position", `{"a": 1, "b": 2, "a": 3}`, defaultJSONOptions(), `{"a": 3, "b": 2}`},
		{"sort_keys", `{"z": 1, "a": 2}`, sorted, `{"a": 2, "z": 1}`},
		{"unicode kept", `{"é": "日本語 😀 \u2028"}`, defaultJSONOptions(), "{\"é\": \"日本語 😀 \u2028\"}"},
		{"ensure_ascii", `"é😀\u007f"`, ascii, `"\u00e9\ud83d\ude00` + "\x7f" + `"`},
		{"escapes", `"q\" b\\ n\n r\r t\t b\b f\f c\u0001 /"`, defaultJSONOptions(), `"q\" b\\ n\n r\r t\t b\b f\f c\u0001 /"`},
		{"empty containers", `{"a": [], "b": {}}`, indent4, "{\n    \"a\": [],\n    \"b\": {}\n}"},
		{"nested indent", `{"type": "function", "function": {"name": "f", "parameters": {"required": ["x", "y"]}}}`, indent4,
			"{\n    \"type\": \"function\",\n    \"function\": {\n        \"name\": \"f\",\n        \"parameters\": {\n            \"required\": [\n                \"x\",\n                \"y\"\n            ]\n        }\n    }\n}"},
		{"separators", `{"a": [1, 2]}`, compact, `{"a":[1,2]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := pyJSON(mustDecode(t, c.in), c.opt)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("\n got: %s\nwant: %s", got, c.want)
			}
		})
	}
}

func TestToJSONFilter(t *testing.T) {
	cases := []struct{ src, want string }{
		{`{{ d | tojson }}`, `{"b": 1, "a": "é"}`},
		{`{{ d | tojson(indent=2) }}`, "{\n  \"b\": 1,\n  \"a\": \"é\"\n}"},
		{`{{ d | tojson(indent='\t') }}`, "{\n\t\"b\": 1,\n\t\"a\": \"é\"\n}"},
		{`{{ d | tojson(ensure_ascii=true) }}`, `{"b": 1, "a": "\u00e9"}`},
		{`{{ d | tojson(sort_keys=true) }}`, `{"a": "é", "b": 1}`},
		{`{{ d | tojson(separators=(',', ':')) }}`, `{"b":1,"a":"é"}`},
		{`{{ 'say "<hi>" & \'bye\'' | tojson }}`, `"say \"<hi>\" & 'bye'"`}, // no HTML escaping (unlike Jinja's own tojson)
		{`{{ {'k': [1, none]} | tojson }}`, `{"k": [1, null]}`},
		{`{{ x | tojson }}`, `null`},
	}
	for _, c := range cases {
		got, err := renderWith(t, c.src, `{"d": {"b": 1, "a": "é"}, "x": null}`)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if got != c.want {
			t.Errorf("%s\n got: %q\nwant: %q", c.src, got, c.want)
		}
	}
	if _, err := renderWith(t, `{{ d | tojson(indent=[1]) }}`, `{"d": {}}`); err == nil {
		t.Error("tojson(indent=[1]) must fail")
	}
}

func TestPyFloatRepr(t *testing.T) {
	cases := map[float64]string{
		0: "0.0", 1: "1.0", -2.5: "-2.5", 0.1: "0.1", 1e-4: "0.0001", 1e-5: "1e-05",
		123456789.0: "123456789.0", 1e15: "1000000000000000.0", 1e16: "1e+16", 1.5e300: "1.5e+300",
		math.Inf(1): "inf", 1.0 / 3: "0.3333333333333333",
	}
	for f, want := range cases {
		if got := pyFloatRepr(f); got != want {
			t.Errorf("repr(%v) = %s, want %s", f, got, want)
		}
	}
	if pyFloatJSON(math.NaN()) != "NaN" || pyFloatJSON(math.Inf(-1)) != "-Infinity" {
		t.Error("json NaN/-Infinity")
	}
}
