package format

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// toolSet is what the parser knows of the request's tools: their names and
// the JSON type of each parameter.
type toolSet map[string]map[string]string

// parseTools reads an OpenAI tools array; malformed entries are skipped
// (the request was validated before generating).
func parseTools(raw json.RawMessage) toolSet {
	var tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string `json:"name"`
			Parameters struct {
				Properties map[string]struct {
					Type any `json:"type"`
				} `json:"properties"`
			} `json:"parameters"`
		} `json:"function"`
	}
	_ = json.Unmarshal(raw, &tools)
	set := toolSet{}
	for _, t := range tools {
		if t.Function.Name == "" {
			continue
		}
		params := map[string]string{}
		for k, v := range t.Function.Parameters.Properties {
			if s, ok := v.Type.(string); ok {
				params[k] = s
			}
		}
		set[t.Function.Name] = params
	}
	return set
}

// callObject is the JSON shape of one call in every JSON format.
type callObject struct {
	Type       string          `json:"type"`
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Parameters json.RawMessage `json:"parameters"`
}

// decodeCall reads one JSON call object; only the keys of callObject are
// allowed, name is required and arguments must be an object (or a string
// holding one).
func decodeCall(raw []byte) (Call, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var o callObject
	if err := dec.Decode(&o); err != nil || dec.More() || o.Name == "" || (o.Type != "" && o.Type != "function") {
		return Call{}, false
	}
	if o.Arguments != nil && o.Parameters != nil {
		return Call{}, false
	}
	args := o.Arguments
	if args == nil {
		args = o.Parameters
	}
	a, ok := argumentsJSON(args)
	return Call{Name: o.Name, Arguments: a}, ok
}

// argumentsJSON normalises arguments to a compact JSON object.
func argumentsJSON(raw json.RawMessage) (string, bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return "{}", true
	}
	if t[0] == '"' {
		var s string
		if json.Unmarshal(t, &s) != nil {
			return "", false
		}
		t = bytes.TrimSpace([]byte(s))
	}
	if len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		return "", false
	}
	var b bytes.Buffer
	if json.Compact(&b, t) != nil {
		return "", false
	}
	return b.String(), true
}

// tagged parses the body of <tool_call>…</tool_call>: a JSON call object or
// Qwen3-Coder's XML function form. Any name is accepted: the tag is the
// model's own statement that this is a call.
func (p *Parser) tagged(body string) (Call, bool) {
	b := strings.TrimSpace(body)
	if strings.HasPrefix(b, "<function=") {
		return p.xmlCall(b)
	}
	return decodeCall([]byte(b))
}

var (
	xmlFunctionRe  = regexp.MustCompile(`(?s)^<function=([^>\s]+)>(.*?)</function>$`)
	xmlParameterRe = regexp.MustCompile(`(?s)<parameter=([^>\s]+)>(.*?)</parameter>`)
)

// xmlCall parses <function=NAME><parameter=KEY>VALUE</parameter>…</function>.
// A value is a JSON string when the tool declares the parameter a string
// (or does not declare it and the value is not JSON); otherwise it is the
// JSON value written.
func (p *Parser) xmlCall(b string) (Call, bool) {
	m := xmlFunctionRe.FindStringSubmatch(b)
	if m == nil {
		return Call{}, false
	}
	name, inner := m[1], m[2]
	if strings.TrimSpace(xmlParameterRe.ReplaceAllString(inner, "")) != "" {
		return Call{}, false
	}
	types := p.tools[name]
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, pm := range xmlParameterRe.FindAllStringSubmatch(inner, -1) {
		if i > 0 {
			buf.WriteByte(',')
		}
		key, _ := json.Marshal(pm[1])
		buf.Write(key)
		buf.WriteByte(':')
		buf.Write(xmlValue(strings.Trim(pm[2], "\n"), types[pm[1]]))
	}
	buf.WriteByte('}')
	return Call{Name: name, Arguments: buf.String()}, true
}

func xmlValue(v, typ string) []byte {
	if typ != "string" {
		t := strings.TrimSpace(v)
		if t != "" && json.Valid([]byte(t)) {
			var c bytes.Buffer
			if json.Compact(&c, []byte(t)) == nil {
				return c.Bytes()
			}
		}
	}
	s, _ := json.Marshal(v)
	return s
}

// bare parses a JSON value that opens the answer: one call object, or a
// list of them, whose names are all tools of the request.
func (p *Parser) bare(v string) ([]Call, bool) {
	var raws []json.RawMessage
	if strings.HasPrefix(v, "[") {
		if json.Unmarshal([]byte(v), &raws) != nil || len(raws) == 0 {
			return nil, false
		}
	} else {
		raws = []json.RawMessage{json.RawMessage(v)}
	}
	calls := make([]Call, 0, len(raws))
	for _, r := range raws {
		c, ok := decodeCall(r)
		if _, known := p.tools[c.Name]; !ok || !known {
			return nil, false
		}
		calls = append(calls, c)
	}
	return calls, true
}

// codeTools are the tool names that take <|python_tag|> code as {"code": …}.
var codeTools = []string{"python", "code_interpreter"}

// python parses what follows <|python_tag|>: JSON call objects separated
// by ";" or whitespace, a built-in NAME.call(key=value, …), or code for a
// declared python / code_interpreter tool.
func (p *Parser) python(body string) ([]Call, bool) {
	b := strings.TrimSpace(body)
	for _, end := range []string{"<|eom_id|>", "<|eot_id|>"} {
		b = strings.TrimSpace(strings.TrimSuffix(b, end))
	}
	if b == "" {
		return nil, false
	}
	if cs, ok := jsonCalls(b); ok {
		return cs, true
	}
	if c, ok := builtinCall(b); ok {
		return []Call{c}, true
	}
	for _, name := range codeTools {
		if _, ok := p.tools[name]; ok {
			code, _ := json.Marshal(map[string]string{"code": b})
			return []Call{{Name: name, Arguments: string(code)}}, true
		}
	}
	return nil, false
}

// jsonCalls parses call objects separated by ";" or whitespace.
func jsonCalls(b string) ([]Call, bool) {
	var calls []Call
	rest := b
	for rest != "" {
		n, st := scanJSON(rest)
		if st != scanDone {
			return nil, false
		}
		c, ok := decodeCall([]byte(rest[:n]))
		if !ok {
			return nil, false
		}
		calls = append(calls, c)
		rest = strings.TrimLeft(rest[n:], " \t\r\n;")
	}
	return calls, len(calls) > 0
}
