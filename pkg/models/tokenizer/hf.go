package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Hugging Face pre-tokenizer regexes with a hand-written splitter.
var hfKnownRegex = map[string]string{
	`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`:      "qwen2",
	`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`: "llama-bpe",
	reGPT2Words: "gpt-2",
}

type hfAddedToken struct {
	ID      int    `json:"id"`
	Content string `json:"content"`
	Special bool   `json:"special"`
	Lstrip  bool   `json:"lstrip"`
	Rstrip  bool   `json:"rstrip"`
}

type hfFile struct {
	AddedTokens   []hfAddedToken  `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Decoder       json.RawMessage `json:"decoder"`
	Model         struct {
		Type         string          `json:"type"`
		Vocab        map[string]int  `json:"vocab"`
		Merges       json.RawMessage `json:"merges"`
		ByteFallback bool            `json:"byte_fallback"`
		IgnoreMerges bool            `json:"ignore_merges"`
	} `json:"model"`
}

// Vocabulary bounds for a tokenizer.json: real vocabularies hold under a
// million tokens, with few unused ids among them.
const (
	maxVocab     = 1 << 24
	maxVocabGaps = 1 << 16
)

// hfNode is any normalizer / pre-tokenizer / decoder / post-processor
// object; nested sequences are walked generically.
type hfNode map[string]any

// FromHF builds a tokenizer from a Hugging Face tokenizer.json and (optional,
// may be nil) tokenizer_config.json. Supported: BPE models, byte-level
// (GPT-2 / Llama 3 / Qwen style) or SentencePiece-like with ▁ and byte
// fallback (Llama 2 style).
func FromHF(tokenizerJSON, tokenizerConfigJSON []byte) (*Tokenizer, error) {
	var hf hfFile
	if err := json.Unmarshal(tokenizerJSON, &hf); err != nil {
		return nil, fmt.Errorf("%w: tokenizer.json: %w", ErrInvalidVocab, err)
	}
	if hf.Model.Type != "BPE" && !(hf.Model.Type == "" && len(hf.Model.Merges) > 0) {
		return nil, fmt.Errorf("%w: tokenizer.json model type %q (only BPE is supported)", ErrUnsupported, hf.Model.Type)
	}
	s := &spec{special: map[string]int64{}}
	if err := hfVocab(&hf, s); err != nil {
		return nil, err
	}
	if err := hfMerges(hf.Model.Merges, s); err != nil {
		return nil, err
	}
	if err := hfPipeline(&hf, s); err != nil {
		return nil, err
	}
	if hf.Model.IgnoreMerges {
		v := true
		s.ignoreMerges = &v
	}
	if err := hfConfig(tokenizerConfigJSON, &hf, s); err != nil {
		return nil, err
	}
	return build(s)
}

func hfVocab(hf *hfFile, s *spec) error {
	n := 0
	for _, id := range hf.Model.Vocab {
		n = max(n, id+1)
	}
	for _, a := range hf.AddedTokens {
		n = max(n, a.ID+1)
	}
	if n == 0 || n > maxVocab {
		return fmt.Errorf("%w: tokenizer.json has %d tokens (the limit is %d)", ErrInvalidVocab, n, maxVocab)
	}
	if defined := len(hf.Model.Vocab) + len(hf.AddedTokens); n > defined+maxVocabGaps {
		return fmt.Errorf("%w: tokenizer.json's ids reach %d but it defines only %d tokens (at most %d unused ids are allowed)", ErrInvalidVocab, n-1, defined, maxVocabGaps)
	}
	s.tokens = make([]string, n)
	s.types = make([]int32, n)
	for i := range s.types {
		s.types[i] = typeUnused
	}
	for w, id := range hf.Model.Vocab {
		if id < 0 {
			return fmt.Errorf("%w: token %q has id %d", ErrInvalidVocab, w, id)
		}
		s.tokens[id], s.types[id] = w, typeNormal
		if _, ok := parseByteToken(w); ok && hf.Model.ByteFallback {
			s.types[id] = typeByte
		}
	}
	s.attrs = map[int32]attr{}
	for _, a := range hf.AddedTokens {
		if a.ID < 0 {
			return fmt.Errorf("%w: added token %q has id %d", ErrInvalidVocab, a.Content, a.ID)
		}
		s.tokens[a.ID], s.types[a.ID] = a.Content, typeUserDefined
		if a.Special {
			s.types[a.ID] = typeControl
		}
		if a.Lstrip {
			s.attrs[int32(a.ID)] |= attrLstrip
		}
		if a.Rstrip {
			s.attrs[int32(a.ID)] |= attrRstrip
		}
	}
	for i, w := range s.tokens {
		if w == "" {
			s.tokens[i] = fmt.Sprintf("[PAD%d]", i)
		}
	}
	return nil
}

func hfMerges(raw json.RawMessage, s *spec) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var strs []string
	if err := json.Unmarshal(raw, &strs); err == nil {
		s.mergeLines = strs
		return nil
	}
	if err := json.Unmarshal(raw, &s.mergePairs); err != nil {
		return fmt.Errorf("%w: tokenizer.json merges are neither \"a b\" strings nor [a, b] pairs: %w", ErrInvalidVocab, err)
	}
	return nil
}

// walk calls fn for every object in a normalizer / pre-tokenizer tree.
func walk(raw json.RawMessage, fn func(hfNode)) {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return
	}
	var rec func(any)
	rec = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			fn(hfNode(x))
			for _, c := range x {
				rec(c)
			}
		case []any:
			for _, c := range x {
				rec(c)
			}
		}
	}
	rec(v)
}

func (n hfNode) typ() string { s, _ := n["type"].(string); return s }

// hfPipeline reads the normalizer / pre-tokenizer / decoder to pick the
// algorithm and pre-tokenizer.
func hfPipeline(hf *hfFile, s *spec) error {
	byteLevel, useRegex, metaspace := false, false, false
	var splits []string
	prefix := false
	scan := func(n hfNode) {
		switch n.typ() {
		case "ByteLevel":
			byteLevel = true
			if b, ok := n["use_regex"].(bool); ok && b {
				useRegex = true
			}
		case "Split":
			if p, ok := n["pattern"].(map[string]any); ok {
				if re, ok := p["Regex"].(string); ok {
					splits = append(splits, re)
				}
			}
		case "Metaspace":
			metaspace = true
			if sch, _ := n["prepend_scheme"].(string); sch == "first" || sch == "always" {
				prefix = true
			} else if b, ok := n["add_prefix_space"].(bool); ok && b {
				prefix = true
			}
		case "Prepend":
			if p, _ := n["prepend"].(string); p == "▁" {
				prefix, metaspace = true, true
			}
		case "Replace":
			if c, _ := n["content"].(string); c == "▁" {
				metaspace = true
			}
		case "NFC":
			s.nfc = true
		}
	}
	walk(hf.Normalizer, scan)
	walk(hf.PreTokenizer, scan)
	walk(hf.Decoder, func(n hfNode) {
		if n.typ() == "ByteLevel" {
			byteLevel = true
		}
	})
	switch {
	case byteLevel:
		s.kind = KindBPE
		if useRegex {
			splits = append(splits, reGPT2Words)
		}
		if len(splits) == 1 {
			if pre, ok := hfKnownRegex[splits[0]]; ok {
				s.pre = pre
				return nil
			}
		}
		if len(splits) == 0 {
			return fmt.Errorf("%w: byte-level tokenizer.json without a pre-tokenizer regex", ErrUnsupported)
		}
		s.pre, s.chain = "custom", splits
	case metaspace || hf.Model.ByteFallback:
		s.kind = KindBPERaw
		s.pre = "spm-bpe"
		s.addSpacePrefix = &prefix
	default:
		return fmt.Errorf("%w: tokenizer.json is neither byte-level nor SentencePiece-style BPE", ErrUnsupported)
	}
	return nil
}

// hfTokenString reads "<s>" or {"content": "<s>"} (null: absent).
func hfTokenString(raw json.RawMessage) (string, bool) {
	var str string
	if json.Unmarshal(raw, &str) == nil && str != "" {
		return str, true
	}
	var obj struct{ Content string }
	if json.Unmarshal(raw, &obj) == nil && obj.Content != "" {
		return obj.Content, true
	}
	return "", false
}

func hfConfig(raw []byte, hf *hfFile, s *spec) error {
	cfg := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return fmt.Errorf("%w: tokenizer_config.json: %w", ErrInvalidVocab, err)
		}
	}
	ids := map[string]int{}
	for w, id := range hf.Model.Vocab {
		ids[w] = id
	}
	for _, a := range hf.AddedTokens {
		ids[a.Content] = a.ID
	}
	for key, role := range map[string]string{"bos_token": "bos", "eos_token": "eos", "unk_token": "unknown", "pad_token": "padding"} {
		if txt, ok := hfTokenString(cfg[key]); ok {
			if id, ok := ids[txt]; ok {
				s.special[role] = int64(id)
			}
		} else if key != "unk_token" && key != "pad_token" {
			s.special[role] = -2 // explicitly none: overrides the kind's default
		}
	}
	for key, dst := range map[string]**bool{"add_bos_token": &s.addBOS, "add_eos_token": &s.addEOS} {
		var b bool
		if v, ok := cfg[key]; ok && json.Unmarshal(v, &b) == nil {
			*dst = &b
		}
	}
	if s.addBOS == nil {
		if bos, ok := hfTemplateBOS(hf.PostProcessor, ids); ok {
			yes := true
			s.addBOS = &yes
			s.special["bos"] = int64(bos)
		} else if len(hf.PostProcessor) > 0 && string(hf.PostProcessor) != "null" {
			no := false
			s.addBOS = &no
		}
	}
	return nil
}

// hfTemplateBOS reports the special token a TemplateProcessing puts first.
func hfTemplateBOS(raw json.RawMessage, ids map[string]int) (int, bool) {
	var pp struct {
		Type   string
		Single []map[string]struct{ ID string }
	}
	if json.Unmarshal(raw, &pp) != nil || len(pp.Single) == 0 {
		return 0, false
	}
	if st, ok := pp.Single[0]["SpecialToken"]; ok {
		id, ok := ids[st.ID]
		return id, ok
	}
	return 0, false
}
