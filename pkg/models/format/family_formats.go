package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// decodeMistral reads what follows [TOOL_CALLS]: a JSON list of
// {"name", "arguments", "id"} (Mistral Nemo), or NAME[CALL_ID]ID[ARGS]{…}
// / NAME[ARGS]{…} pieces separated by further [TOOL_CALLS] (Mistral Small
// 3.2, Magistral, Devstral, Ministral).
func decodeMistral(body string, _ toolSet) ([]Call, bool) {
	b := strings.TrimSpace(body)
	if strings.HasPrefix(b, "[") {
		var list []struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			ID        string          `json:"id"`
		}
		if json.Unmarshal([]byte(b), &list) != nil {
			return nil, false
		}
		calls := make([]Call, 0, len(list))
		for _, o := range list {
			args, ok := argumentsJSON(o.Arguments)
			if !ok || o.Name == "" {
				return nil, false
			}
			calls = append(calls, Call{ID: o.ID, Name: o.Name, Arguments: args})
		}
		return calls, true
	}
	var calls []Call
	for _, piece := range strings.Split(b, "[TOOL_CALLS]") {
		head, args, ok := strings.Cut(strings.TrimSpace(piece), "[ARGS]")
		if !ok {
			return nil, false
		}
		name, id, _ := strings.Cut(head, "[CALL_ID]")
		a, ok := argumentsJSON(json.RawMessage(args))
		if !ok || strings.TrimSpace(name) == "" {
			return nil, false
		}
		calls = append(calls, Call{ID: strings.TrimSpace(id), Name: strings.TrimSpace(name), Arguments: a})
	}
	return calls, true
}

const (
	dsCallBegin = "<｜tool▁call▁begin｜>"
	dsCallEnd   = "<｜tool▁call▁end｜>"
	dsSep       = "<｜tool▁sep｜>"
)

// decodeDeepSeek reads <｜tool▁call▁begin｜>…<｜tool▁call▁end｜> items: R1's
// function<｜tool▁sep｜>NAME\n```json\n{…}\n``` or V3.1's NAME<｜tool▁sep｜>{…}.
func decodeDeepSeek(body string, _ toolSet) ([]Call, bool) {
	items, ok := delimited(body, dsCallBegin, dsCallEnd)
	if !ok {
		return nil, false
	}
	calls := make([]Call, 0, len(items))
	for _, it := range items {
		left, right, ok := strings.Cut(it, dsSep)
		if !ok {
			return nil, false
		}
		name, args := strings.TrimSpace(left), right
		if name == "function" { // R1: the name, then a fenced JSON block
			n, rest, ok := strings.Cut(right, "\n")
			if !ok {
				return nil, false
			}
			name = strings.TrimSpace(n)
			args = strings.TrimSpace(rest)
			args = strings.TrimPrefix(args, "```json")
			args = strings.TrimSuffix(strings.TrimSpace(args), "```")
		}
		a, ok := argumentsJSON(json.RawMessage(args))
		if !ok || name == "" {
			return nil, false
		}
		calls = append(calls, Call{Name: name, Arguments: a})
	}
	return calls, true
}

// delimited splits s into the bodies of begin…end items; anything but
// whitespace between items is an error.
func delimited(s, begin, end string) ([]string, bool) {
	var out []string
	rest := strings.TrimSpace(s)
	for rest != "" {
		if !strings.HasPrefix(rest, begin) {
			return nil, false
		}
		item, after, ok := strings.Cut(rest[len(begin):], end)
		if !ok {
			return nil, false
		}
		out = append(out, item)
		rest = strings.TrimSpace(after)
	}
	return out, len(out) > 0
}

// decodeCommandR reads Command R7B's action list:
// [{"tool_call_id": "0", "tool_name": …, "parameters": {…}}, …].
func decodeCommandR(body string, _ toolSet) ([]Call, bool) {
	var list []struct {
		ID         string          `json:"tool_call_id"`
		Name       string          `json:"tool_name"`
		Parameters json.RawMessage `json:"parameters"`
	}
	if json.Unmarshal([]byte(strings.TrimSpace(body)), &list) != nil {
		return nil, false
	}
	calls := make([]Call, 0, len(list))
	for _, o := range list {
		a, ok := argumentsJSON(o.Parameters)
		if !ok || o.Name == "" {
			return nil, false
		}
		calls = append(calls, Call{ID: o.ID, Name: o.Name, Arguments: a})
	}
	return calls, true
}

// decodeJSONList reads a JSON list of {"name", "arguments"} objects
// (Nemotron v2's <TOOLCALL>).
func decodeJSONList(body string, _ toolSet) ([]Call, bool) {
	var raws []json.RawMessage
	if json.Unmarshal([]byte(strings.TrimSpace(body)), &raws) != nil {
		return nil, false
	}
	calls := make([]Call, 0, len(raws))
	for _, r := range raws {
		c, ok := decodeCall(r)
		if !ok {
			return nil, false
		}
		calls = append(calls, c)
	}
	return calls, true
}

const (
	kimiCallBegin = "<|tool_call_begin|>"
	kimiCallEnd   = "<|tool_call_end|>"
	kimiArgs      = "<|tool_call_argument_begin|>"
)

// decodeKimi reads Kimi K2's <|tool_call_begin|>functions.NAME:IDX
// <|tool_call_argument_begin|>{…}<|tool_call_end|> items; the id is
// "functions.NAME:IDX".
func decodeKimi(body string, _ toolSet) ([]Call, bool) {
	items, ok := delimited(body, kimiCallBegin, kimiCallEnd)
	if !ok {
		return nil, false
	}
	calls := make([]Call, 0, len(items))
	for _, it := range items {
		id, args, ok := strings.Cut(it, kimiArgs)
		id = strings.TrimSpace(id)
		name := strings.TrimPrefix(id, "functions.")
		if i := strings.LastIndexByte(name, ':'); i >= 0 {
			name = name[:i]
		}
		a, aok := argumentsJSON(json.RawMessage(args))
		if !ok || !aok || name == "" {
			return nil, false
		}
		calls = append(calls, Call{ID: id, Name: name, Arguments: a})
	}
	return calls, true
}

var glmArgRe = regexp.MustCompile(`(?s)<arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)</arg_value>`)

// decodeGLM reads GLM 4.5+'s NAME <arg_key>K</arg_key><arg_value>V</arg_value>….
func decodeGLM(body string, tools toolSet) ([]Call, bool) {
	b := strings.TrimSpace(body)
	i := strings.Index(b, "<arg_key>")
	if i < 0 {
		i = len(b)
	}
	name := strings.TrimSpace(b[:i])
	rest := b[i:]
	if name == "" || strings.TrimSpace(glmArgRe.ReplaceAllString(rest, "")) != "" {
		return nil, false
	}
	var pairs [][2]string
	for _, m := range glmArgRe.FindAllStringSubmatch(rest, -1) {
		pairs = append(pairs, [2]string{m[1], m[2]})
	}
	return []Call{{Name: name, Arguments: objectJSON(pairs, tools[name])}}, true
}

var (
	invokeRe      = regexp.MustCompile(`(?s)<invoke name="([^"]+)">(.*?)</invoke>`)
	namedParamRe  = regexp.MustCompile(`(?s)<parameter name="([^"]+)">(.*?)</parameter>`)
	seedFunctionR = regexp.MustCompile(`(?s)^<function=([^>\s]+)>(.*?)</function>$`)
)

// decodeMiniMax reads MiniMax-M2's <invoke name="N"><parameter name="K">V</parameter></invoke>….
func decodeMiniMax(body string, tools toolSet) ([]Call, bool) {
	if strings.TrimSpace(invokeRe.ReplaceAllString(body, "")) != "" {
		return nil, false
	}
	var calls []Call
	for _, m := range invokeRe.FindAllStringSubmatch(body, -1) {
		if strings.TrimSpace(namedParamRe.ReplaceAllString(m[2], "")) != "" {
			return nil, false
		}
		var pairs [][2]string
		for _, pm := range namedParamRe.FindAllStringSubmatch(m[2], -1) {
			pairs = append(pairs, [2]string{pm[1], strings.Trim(pm[2], "\n")})
		}
		calls = append(calls, Call{Name: m[1], Arguments: objectJSON(pairs, tools[m[1]])})
	}
	return calls, len(calls) > 0
}

// decodeSeed reads Seed-OSS's <function=NAME><parameter=K>V</parameter></function>;
// non-string values may be Python literals ({'city': 'Paris'}), as its
// template writes them.
func decodeSeed(body string, tools toolSet) ([]Call, bool) {
	m := seedFunctionR.FindStringSubmatch(strings.TrimSpace(body))
	if m == nil {
		return nil, false
	}
	name, inner := m[1], m[2]
	if strings.TrimSpace(xmlParameterRe.ReplaceAllString(inner, "")) != "" {
		return nil, false
	}
	var pairs [][2]string
	for _, pm := range xmlParameterRe.FindAllStringSubmatch(inner, -1) {
		pairs = append(pairs, [2]string{pm[1], strings.Trim(pm[2], "\n")})
	}
	return []Call{{Name: name, Arguments: objectJSON(pairs, tools[name])}}, true
}

// decodeApertus reads Apertus' [{"NAME": {…}}, …].
func decodeApertus(body string, _ toolSet) ([]Call, bool) {
	var list []map[string]json.RawMessage
	if json.Unmarshal([]byte(strings.TrimSpace(body)), &list) != nil {
		return nil, false
	}
	calls := make([]Call, 0, len(list))
	for _, o := range list {
		if len(o) != 1 {
			return nil, false
		}
		for name, args := range o {
			a, ok := argumentsJSON(args)
			if !ok {
				return nil, false
			}
			calls = append(calls, Call{Name: name, Arguments: a})
		}
	}
	return calls, true
}

// decodeFunctionary reads Functionary v3.1's <function=NAME>{…}</function>
// (the section opens at "<function=", so the body is NAME>{…}).
func decodeFunctionary(body string, _ toolSet) ([]Call, bool) {
	name, args, ok := strings.Cut(body, ">")
	a, aok := argumentsJSON(json.RawMessage(args))
	if !ok || !aok || strings.TrimSpace(name) == "" {
		return nil, false
	}
	return []Call{{Name: strings.TrimSpace(name), Arguments: a}}, true
}

// objectJSON builds the arguments object from key/value text pairs: a
// value is a JSON string when the tool declares the parameter a string;
// otherwise it is the JSON (or Python literal) value written, falling back
// to a string.
func objectJSON(pairs [][2]string, types map[string]string) string {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, kv := range pairs {
		if i > 0 {
			buf.WriteByte(',')
		}
		key, _ := json.Marshal(kv[0])
		buf.Write(key)
		buf.WriteByte(':')
		v := xmlValue(kv[1], types[kv[0]])
		if types[kv[0]] != "string" && v[0] == '"' {
			if pv, err := pyValue(strings.TrimSpace(kv[1])); err == nil {
				v, _ = json.Marshal(pv)
			}
		}
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.String()
}

// pyValue parses a whole Python literal: dicts, lists, strings, numbers,
// True/False/None.
func pyValue(s string) (any, error) {
	v, n, err := pyNested(s)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(s[n:]) != "" {
		return nil, fmt.Errorf("trailing text %q", s[n:])
	}
	return v, nil
}

func pyNested(s string) (any, int, error) {
	i := len(s) - len(strings.TrimLeft(s, " \t\n"))
	if i == len(s) || (s[i] != '{' && s[i] != '[') {
		v, n, err := pyLiteral(s[i:])
		return v, i + n, err
	}
	open, isDict := s[i], s[i] == '{'
	i++
	var list []any
	dict := map[string]any{}
	for {
		i += len(s[i:]) - len(strings.TrimLeft(s[i:], " \t\n"))
		if i < len(s) && (s[i] == '}' && open == '{' || s[i] == ']' && open == '[') {
			if isDict {
				return dict, i + 1, nil
			}
			return append([]any{}, list...), i + 1, nil
		}
		v, n, err := pyNested(s[i:])
		if err != nil {
			return nil, 0, err
		}
		i += n
		if isDict {
			k, ok := v.(string)
			rest := strings.TrimLeft(s[i:], " \t\n")
			if !ok || !strings.HasPrefix(rest, ":") {
				return nil, 0, fmt.Errorf("bad dict entry at %q", s[i:])
			}
			i = len(s) - len(rest) + 1
			if v, n, err = pyNested(s[i:]); err != nil {
				return nil, 0, err
			}
			i += n
			dict[k] = v
		} else {
			list = append(list, v)
		}
		i += len(s[i:]) - len(strings.TrimLeft(s[i:], " \t\n"))
		if i < len(s) && s[i] == ',' {
			i++
		}
		if i >= len(s) {
			return nil, 0, fmt.Errorf("unterminated %c", open)
		}
	}
}

// decodeCallList reads <tool_calls>…</tool_calls> (Apriel, MiniMax-M1): a
// JSON list of {"name", "arguments", "id"}, or call objects one per line.
func decodeCallList(body string, tools toolSet) ([]Call, bool) {
	b := strings.TrimSpace(body)
	if strings.HasPrefix(b, "[") {
		return decodeMistral(b, tools)
	}
	return jsonCalls(b)
}

var (
	dsmlInvokeRe = regexp.MustCompile(`(?s)<｜DSML｜invoke name="([^"]+)">(.*?)</｜DSML｜invoke>`)
	dsmlParamRe  = regexp.MustCompile(`(?s)<｜DSML｜parameter name="([^"]+)" string="(true|false)">(.*?)</｜DSML｜parameter>`)
)

// decodeDSML reads DeepSeek V3.2 / V4's <｜DSML｜invoke name="N">
// <｜DSML｜parameter name="K" string="true|false">V</｜DSML｜parameter>…
// items: string="true" values are strings, the others JSON.
func decodeDSML(body string, _ toolSet) ([]Call, bool) {
	if strings.TrimSpace(dsmlInvokeRe.ReplaceAllString(body, "")) != "" {
		return nil, false
	}
	var calls []Call
	for _, m := range dsmlInvokeRe.FindAllStringSubmatch(body, -1) {
		if strings.TrimSpace(dsmlParamRe.ReplaceAllString(m[2], "")) != "" {
			return nil, false
		}
		types := map[string]string{}
		var pairs [][2]string
		for _, pm := range dsmlParamRe.FindAllStringSubmatch(m[2], -1) {
			if pm[2] == "true" {
				types[pm[1]] = "string"
			}
			pairs = append(pairs, [2]string{pm[1], pm[3]})
		}
		calls = append(calls, Call{Name: m[1], Arguments: objectJSON(pairs, types)})
	}
	return calls, len(calls) > 0
}

// decodePythonic reads LFM2's [name(key=value, …), …]: values are Python
// or JSON literals (strings, numbers, lists, dicts, True/False/None).
func decodePythonic(body string, _ toolSet) ([]Call, bool) {
	b := strings.TrimSpace(body)
	if !strings.HasPrefix(b, "[") || !strings.HasSuffix(b, "]") {
		return nil, false
	}
	rest := strings.TrimSpace(b[1 : len(b)-1])
	var calls []Call
	for rest != "" {
		open := strings.IndexByte(rest, '(')
		if open <= 0 || !identRe.MatchString(strings.TrimSpace(rest[:open])) {
			return nil, false
		}
		name := strings.TrimSpace(rest[:open])
		args, n, err := pyKwargs(rest[open+1:])
		if err != nil {
			return nil, false
		}
		raw, _ := json.Marshal(args)
		calls = append(calls, Call{Name: name, Arguments: string(raw)})
		rest = strings.TrimLeft(rest[open+1+n:], " \t\n,")
	}
	return calls, len(calls) > 0
}

// pyKwargs reads key=value pairs up to the closing ")", returning them and
// the length read (the ")" included).
func pyKwargs(s string) (map[string]any, int, error) {
	args := map[string]any{}
	i := 0
	for {
		i += len(s[i:]) - len(strings.TrimLeft(s[i:], " \t\n,"))
		if i < len(s) && s[i] == ')' {
			return args, i + 1, nil
		}
		eq := strings.IndexByte(s[i:], '=')
		if eq <= 0 || !identRe.MatchString(strings.TrimSpace(s[i:i+eq])) {
			return nil, 0, fmt.Errorf("expected key=value at %q", s[i:])
		}
		key := strings.TrimSpace(s[i : i+eq])
		v, n, err := pyNested(s[i+eq+1:])
		if err != nil {
			return nil, 0, err
		}
		args[key] = v
		i += eq + 1 + n
		if i >= len(s) {
			return nil, 0, fmt.Errorf("unterminated call")
		}
	}
}

// decodeHarmony reads NAME<|message|>ARGS (a harmony message addressed to
// a function; the call ends the turn, so it runs to the end of the text).
func decodeHarmony(body string, _ toolSet) ([]Call, bool) {
	name, args, ok := strings.Cut(body, "<|message|>")
	name = strings.TrimSpace(name)
	a, aok := argumentsJSON(json.RawMessage(args))
	if !ok || !aok || name == "" || !identRe.MatchString(name) {
		return nil, false
	}
	return []Call{{Name: name, Arguments: a}}, true
}

// decodeFireFunction reads what follows FireFunction v2's "functools[": the
// rest of the JSON list of {"name", "arguments"} (no closing marker).
func decodeFireFunction(body string, tools toolSet) ([]Call, bool) {
	return decodeJSONList("["+strings.TrimSpace(body), tools)
}
