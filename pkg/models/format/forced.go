package format

import "encoding/json"

// forcedCall is a tool choice that requires a call: of the named function,
// or (name "") of any of the request's tools. The answer, constrained to
// one JSON object, is held whole and read as the call at the end.
type forcedCall struct {
	name  string
	tools []string // the request's function names
	text  []byte   // the answer so far
}

func newForcedCall(name string, tools json.RawMessage) *forcedCall {
	return &forcedCall{name: name, tools: ToolNames(tools)}
}

// flush reads the answer as the call; an answer cut short (not a whole
// object) is content.
func (fc *forcedCall) flush() (string, []Call) {
	c, ok := fc.call()
	if !ok {
		return string(fc.text), nil
	}
	return "", []Call{c}
}

// call reads the answer, one JSON object, as the required call: either
// {"name": …, "arguments": {…}} or the arguments of the named function.
func (fc *forcedCall) call() (Call, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(fc.text, &obj) != nil {
		return Call{}, false
	}
	var name string
	args, hasArgs := obj["arguments"]
	if !hasArgs {
		args, hasArgs = obj["parameters"]
	}
	if raw, ok := obj["name"]; ok && hasArgs && json.Unmarshal(raw, &name) == nil && (fc.name == "" || name == fc.name) {
		var s string
		if json.Unmarshal(args, &s) == nil { // arguments as an encoded string
			args = json.RawMessage(s)
		}
		return Call{Name: name, Arguments: string(args)}, true
	}
	name = fc.name
	if name == "" && len(fc.tools) > 0 {
		name = fc.tools[0]
	}
	return Call{Name: name, Arguments: string(fc.text)}, true
}

// ToolNames lists the function names of an OpenAI tools array.
func ToolNames(tools json.RawMessage) []string {
	var list []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	_ = json.Unmarshal(tools, &list)
	names := make([]string, 0, len(list))
	for _, t := range list {
		names = append(names, t.Function.Name)
	}
	return names
}
