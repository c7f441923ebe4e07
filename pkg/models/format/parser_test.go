package format

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const testTools = `[
 {"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{
   "city":{"type":"string"},"days":{"type":"integer"},"code":{"type":"string"}}}}},
 {"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{}}}}]`

const pythonTools = `[{"type":"function","function":{"name":"python","parameters":{"type":"object","properties":{"code":{"type":"string"}}}}}]`

func wc(name, args string) Call { return Call{Name: name, Arguments: args} }

type parseCase struct {
	name    string
	tools   string
	in      string
	content string
	calls   []Call
}

func parseCases() []parseCase {
	weather := wc("get_weather", `{"city":"Paris"}`)
	return []parseCase{
		{"plain", testTools, "The sky is blue.\n", "The sky is blue.\n", nil},
		{"empty", testTools, "", "", nil},
		{"leading spaces kept", testTools, "  hi there", "  hi there", nil},
		{"angle brackets", testTools, "x < y and <b>bold</b> <tool", "x < y and <b>bold</b> <tool", nil},
		{"partial tag at end", testTools, "a <tool_ca", "a <tool_ca", nil},
		{"hermes", testTools, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>", "", []Call{weather}},
		{"hermes text and two calls", testTools,
			"Let me check.\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>",
			"Let me check.", []Call{weather, wc("get_time", "{}")}},
		{"hermes text after", testTools, "<tool_call>{\"name\":\"get_time\",\"arguments\":{}}</tool_call>\n\nDone.", "Done.", []Call{wc("get_time", "{}")}},
		{"hermes unknown name still a call", testTools, "<tool_call>{\"name\":\"other\",\"arguments\":{\"a\":[1,2]}}</tool_call>", "", []Call{wc("other", `{"a":[1,2]}`)}},
		{"hermes bad body stays text", testTools, "<tool_call>not json</tool_call> rest", "<tool_call>not json</tool_call> rest", nil},
		{"hermes unterminated call", testTools, "<tool_call>\n{\"name\":\"get_time\",\"arguments\":{}}\n", "", []Call{wc("get_time", "{}")}},
		{"hermes unterminated junk", testTools, "ok <tool_call>{\"name\":", "ok <tool_call>{\"name\":", nil},
		{"hermes arguments as string", testTools, "<tool_call>{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\": \\\"Paris\\\"}\"}</tool_call>", "", []Call{weather}},
		{"hermes braces in strings", testTools, "<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"}{</tool_cal\"}}</tool_call>", "", []Call{wc("get_weather", `{"city":"}{</tool_cal"}`)}},
		{"hermes close tag in a string", testTools, "<tool_call>{\"name\":\"f\",\"arguments\":{\"s\":\"</tool_call>\"}}</tool_call>", "<tool_call>{\"name\":\"f\",\"arguments\":{\"s\":\"</tool_call>\"}}</tool_call>", nil},
		{"hermes extra key is not a call", testTools, "<tool_call>{\"name\":\"get_time\",\"x\":1}</tool_call>", "<tool_call>{\"name\":\"get_time\",\"x\":1}</tool_call>", nil},
		{"qwen3-coder xml", testTools,
			"<tool_call>\n<function=get_weather>\n<parameter=city>\n42\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
			"", []Call{wc("get_weather", `{"city":"42","days":3}`)}},
		{"qwen3-coder xml undeclared", testTools,
			"<tool_call><function=f><parameter=a>x y</parameter><parameter=b>[1, 2]</parameter></function></tool_call>",
			"", []Call{wc("f", `{"a":"x y","b":[1,2]}`)}},
		{"llama bare", testTools, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}", "", []Call{weather}},
		{"llama bare typed with space", testTools, " \n{\"type\": \"function\", \"name\": \"get_time\", \"parameters\": {}}\n", "", []Call{wc("get_time", "{}")}},
		{"llama bare two", testTools, "{\"name\":\"get_weather\",\"parameters\":{\"city\":\"Paris\"}}; {\"name\":\"get_time\",\"parameters\":{}}", "", []Call{weather, wc("get_time", "{}")}},
		{"llama bare then text", testTools, "{\"name\":\"get_time\",\"parameters\":{}}\nThat is all.", "That is all.", []Call{wc("get_time", "{}")}},
		{"bare unknown name is content", testTools, "{\"name\": \"Bob\", \"age\": 3}", "{\"name\": \"Bob\", \"age\": 3}", nil},
		{"bare undeclared tool is content", testTools, "{\"name\":\"nope\",\"parameters\":{}}", "{\"name\":\"nope\",\"parameters\":{}}", nil},
		{"bare without tools is content", "", "{\"name\":\"get_time\",\"parameters\":{}}", "{\"name\":\"get_time\",\"parameters\":{}}", nil},
		{"json after text is content", testTools, "Here: {\"name\":\"get_time\",\"parameters\":{}}", "Here: {\"name\":\"get_time\",\"parameters\":{}}", nil},
		{"not json", testTools, "{not json} at all", "{not json} at all", nil},
		{"unfinished json", testTools, "  {\"name\": \"get_time\", \"param", "  {\"name\": \"get_time\", \"param", nil},
		{"mistral list", testTools, "[{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}},{\"name\":\"get_time\",\"arguments\":{}}]", "", []Call{weather, wc("get_time", "{}")}},
		{"list of numbers", testTools, "[1, 2, 3] are numbers", "[1, 2, 3] are numbers", nil},
		{"python tag json", testTools, "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}<|eom_id|>", "", []Call{weather}},
		{"python tag after text", testTools, "Sure. <|python_tag|>{\"name\":\"get_time\",\"parameters\":{}}; {\"name\":\"get_weather\",\"parameters\":{\"city\":\"Paris\"}}", "Sure.", []Call{wc("get_time", "{}"), weather}},
		{"python tag builtin", testTools, "<|python_tag|>brave_search.call(query=\"weather in \\\"Paris\\\"\", count=3, safe=True)", "",
			[]Call{wc("brave_search", `{"count":3,"query":"weather in \"Paris\"","safe":true}`)}},
		{"python tag code", pythonTools, "<|python_tag|>print(1 + 1)\n", "", []Call{wc("python", `{"code":"print(1 + 1)"}`)}},
		{"python tag code without tool", testTools, "Run: <|python_tag|>print(1 + 1)", "Run: print(1 + 1)", nil},
	}
}

// run feeds the pieces through a fresh parser and collects the results.
func run(tools string, pieces []string) (string, []Call) {
	p := NewParser(json.RawMessage(tools))
	var content strings.Builder
	var calls []Call
	for _, piece := range pieces {
		c, cs := p.Push(piece)
		content.WriteString(c)
		calls = append(calls, cs...)
	}
	c, cs := p.Flush()
	content.WriteString(c)
	return content.String(), append(calls, cs...)
}

func check(t *testing.T, c parseCase, pieces []string) {
	t.Helper()
	content, calls := run(c.tools, pieces)
	if content != c.content || !reflect.DeepEqual(calls, c.calls) {
		t.Fatalf("pieces %q:\ncontent %q, want %q\ncalls %+v, want %+v", pieces, content, c.content, calls, c.calls)
	}
}

func TestParseWhole(t *testing.T) {
	for _, c := range parseCases() {
		t.Run(c.name, func(t *testing.T) { check(t, c, []string{c.in}) })
	}
}

// TestParseEverySplit checks that every split of the text into two and
// three pieces, and one byte at a time, gives the same result.
func TestParseEverySplit(t *testing.T) {
	for _, c := range parseCases() {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			for i := 0; i <= len(in); i++ {
				check(t, c, []string{in[:i], in[i:]})
				for j := i; j <= len(in); j += 3 {
					check(t, c, []string{in[:i], in[i:j], in[j:]})
				}
			}
			bytes := make([]string, len(in))
			for i := range in {
				bytes[i] = in[i : i+1]
			}
			check(t, c, bytes)
		})
	}
}

// TestParseStreamsPlainText checks that plain text is not held back: all
// but trailing whitespace and a possible marker start comes out at once.
func TestParseStreamsPlainText(t *testing.T) {
	cases := []struct{ push, want string }{
		{"Hello", "Hello"},
		{" world \n", " world"},
		{"a <", " \na"},
		{"b", " <b"},
		{"<|python", ""},
		{"_ta", ""},
		{"x|>", "<|python_tax|>"},
	}
	p := NewParser(json.RawMessage(testTools))
	for i, c := range cases {
		got, calls := p.Push(c.push)
		if got != c.want || calls != nil {
			t.Fatalf("push %d %q: got %q %v, want %q", i, c.push, got, calls, c.want)
		}
	}
}

// TestParseHoldsCallStart checks that text that may open a call is held
// until it is decided, and the call comes out as soon as it closes.
func TestParseHoldsCallStart(t *testing.T) {
	p := NewParser(json.RawMessage(testTools))
	steps := []struct {
		push, content string
		calls         int
	}{
		{"Checking.\n<tool", "Checking.", 0},
		{"_call>{\"name\":\"get_time\",", "", 0},
		{"\"arguments\":{}}</tool_call>", "", 1},
		{"\nok", "ok", 0},
	}
	for i, s := range steps {
		got, calls := p.Push(s.push)
		if got != s.content || len(calls) != s.calls {
			t.Fatalf("step %d: %q %v, want %q and %d calls", i, got, calls, s.content, s.calls)
		}
	}
	if p.Calls() != 1 {
		t.Errorf("Calls() = %d", p.Calls())
	}
}

func TestParseKwargsErrors(t *testing.T) {
	for _, in := range []string{`q`, `q=`, `q="x`, `q=foo`, `1=2`, `q="a" r="b"`} {
		if _, err := parseKwargs(in); err == nil {
			t.Errorf("parseKwargs(%q): want an error", in)
		}
	}
	got, err := parseKwargs(`a='it\'s', b=-1.5e2, c=None, d=False`)
	want := map[string]any{"a": "it's", "b": -150.0, "c": nil, "d": false}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("parseKwargs = %v, %v; want %v", got, err, want)
	}
}
