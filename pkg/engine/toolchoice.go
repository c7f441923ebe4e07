package engine

import "encoding/json"

// applyToolChoice checks a chat request's tool choice and applies it: a
// required call (Required, or a Name) constrains the answer to one JSON object (JSON mode), and
// a named function is the only tool the template sees.
func applyToolChoice(req ChatRequest) (ChatRequest, error) {
	tc := req.ToolChoice
	if !tc.Required && tc.Name == "" {
		return req, nil
	}
	req.ToolChoice.Required = true // a named function is a required call
	if !hasTools(req.Tools) {
		return req, Errorf(KindBadRequest, "tool_choice requires a tool call but the request declares no tools")
	}
	req.Options.JSONMode = true // the answer is one JSON object: the call
	if tc.Name == "" {
		return req, nil
	}
	one, ok := onlyTool(req.Tools, tc.Name)
	if !ok {
		return req, Errorf(KindBadRequest, "tool_choice names function %q, which is not among the request's tools", tc.Name)
	}
	req.Tools = one
	return req, nil
}

// onlyTool returns the tools array reduced to the named function.
func onlyTool(tools json.RawMessage, name string) (json.RawMessage, bool) {
	var list []json.RawMessage
	if json.Unmarshal(tools, &list) != nil {
		return nil, false
	}
	for _, raw := range list {
		var t struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if json.Unmarshal(raw, &t) == nil && t.Function.Name == name {
			return json.RawMessage("[" + string(raw) + "]"), true
		}
	}
	return nil, false
}
