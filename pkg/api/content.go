package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// flattenContent rewrites every message whose content is an array of parts
// (what the OpenAI SDKs, LangChain and most agents send) into a string:
// the text parts in order, joined by newlines, so that chat templates of
// text models see what they expect. A null content (an assistant turn that
// only made tool calls, as openai-node and agents send it) becomes "", which
// templates can concatenate. An image or audio part is a 400: the models
// helexa runs read text only. Every other key keeps its place.
func flattenContent(raw json.RawMessage) (json.RawMessage, error) {
	var msgs []json.RawMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return raw, nil // validateMessages reports the shape
	}
	changed := false
	for i, m := range msgs {
		out, ok, err := flattenMessage(m, i)
		if err != nil {
			return nil, err
		}
		if ok {
			msgs[i], changed = out, true
		}
	}
	if !changed {
		return raw, nil
	}
	return json.Marshal(msgs)
}

// flattenMessage rewrites one message's content array (or null); ok
// reports a change.
func flattenMessage(m json.RawMessage, idx int) (json.RawMessage, bool, error) {
	keys, vals, err := orderedObject(m)
	if err != nil {
		return m, false, nil
	}
	for k, key := range keys {
		if key != "content" || !(isJSONArray(vals[k]) || isNull(vals[k])) {
			continue
		}
		text := ""
		if isJSONArray(vals[k]) {
			if text, err = joinTextParts(vals[k], idx); err != nil {
				return nil, false, err
			}
		}
		vals[k], _ = json.Marshal(text)
		var b bytes.Buffer
		b.WriteByte('{')
		for j := range keys {
			if j > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(keys[j])
			b.Write(kb)
			b.WriteByte(':')
			b.Write(vals[j])
		}
		b.WriteByte('}')
		return b.Bytes(), true, nil
	}
	return m, false, nil
}

// joinTextParts joins the text of [{"type":"text","text":…}, …].
func joinTextParts(raw json.RawMessage, idx int) (string, error) {
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", badRequest("messages[%d].content: a list of content parts must hold objects like {\"type\":\"text\",\"text\":\"…\"}", idx)
	}
	texts := make([]string, 0, len(parts))
	for j, p := range parts {
		switch p.Type {
		case "text", "input_text":
			if p.Text == nil {
				return "", badRequest("messages[%d].content[%d]: a text part needs \"text\"", idx, j)
			}
			texts = append(texts, *p.Text)
		case "image_url", "input_image", "image", "input_audio", "audio", "file":
			return "", badRequest("messages[%d].content[%d] is a %q part, but the models helexa runs read text only (no vision or audio); send text parts", idx, j, p.Type)
		default:
			return "", badRequest("messages[%d].content[%d] has type %q; helexa understands \"text\" parts", idx, j, p.Type)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// orderedObject splits a JSON object into its keys and raw values, in
// order.
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, fmt.Errorf("not an object")
	}
	var keys []string
	var vals []json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys, vals = append(keys, key), append(vals, v)
	}
	return keys, vals, nil
}
