package tokenizer

import (
	"fmt"
	"slices"
	"strings"
)

// GGUF token types (tokenizer.ggml.token_type).
const (
	typeUndefined   = 0
	typeNormal      = 1
	typeUnknown     = 2
	typeControl     = 3
	typeUserDefined = 4
	typeUnused      = 5
	typeByte        = 6
)

// spec is the format-independent description both loaders produce.
type spec struct {
	kind   Kind
	pre    string
	tokens []string
	scores []float32
	types  []int32 // nil: all normal
	// BPE merges in rank order: "left right" lines (GGUF, tokenizer.json
	// v1) or pairs (tokenizer.json v2); see merge.
	mergeLines []string
	mergePairs [][2]string
	special    map[string]int64
	// optional overrides; nil keeps the kind's default
	addBOS, addEOS, addSpacePrefix *bool
	name                           string // general.name (phi-3 strip rules)
	nfc                            bool
	ignoreMerges                   *bool
	chain                          []string       // regexes of a tokenizer.json pre-tokenizer (KindBPE, pre "custom")
	attrs                          map[int32]attr // extra attributes (lstrip / rstrip)
}

// mergeCount is the number of BPE merges.
func (s *spec) mergeCount() int { return len(s.mergeLines) + len(s.mergePairs) }

// merge returns the pair of merge rank i. A "left right" line is split at
// the first space from its second byte on, as llama.cpp does; a line without
// one is malformed (ok false).
func (s *spec) merge(i int) (left, right string, ok bool) {
	if s.mergeLines == nil {
		p := s.mergePairs[i]
		return p[0], p[1], true
	}
	m := s.mergeLines[i]
	if len(m) > 1 {
		if j := strings.IndexByte(m[1:], ' '); j >= 0 {
			return m[:j+1], m[j+2:], true
		}
	}
	return "", "", false
}

// specialKeys are the special-token roles in llama.cpp's load order.
var specialKeys = []string{"bos", "eos", "eot", "eom", "unknown", "seperator", "padding", "mask",
	"fim_pre", "fim_suf", "fim_mid", "fim_pad", "fim_rep", "fim_sep"}

func build(s *spec) (*Tokenizer, error) {
	n := len(s.tokens)
	if n == 0 {
		return nil, fmt.Errorf("%w: no tokens", ErrInvalidVocab)
	}
	if s.types != nil && len(s.types) < n {
		return nil, fmt.Errorf("%w: %d token types for %d tokens", ErrInvalidVocab, len(s.types), n)
	}
	if s.scores != nil && len(s.scores) < n {
		return nil, fmt.Errorf("%w: %d scores for %d tokens", ErrInvalidVocab, len(s.scores), n)
	}
	for i, w := range s.tokens {
		if w == "" {
			s.tokens[i] = fmt.Sprintf("[EMPTY_%d]", i)
		}
	}
	text, err := newVocabText(s.tokens)
	if err != nil {
		return nil, err
	}
	t := &Tokenizer{kind: s.kind, pre: s.pre, text: text, scores: s.scores, nfc: s.nfc,
		attrs: make([]attr, n), cache: newWordCache()}
	t.toID = newTokenIndex(&t.text)
	for i := range n {
		if old, ok := t.toID.insert(int32(i)); !ok {
			return nil, fmt.Errorf("%w: duplicate token %q has ids %d and %d", ErrInvalidVocab, s.tokens[i], old, i)
		}
		t.attrs[i] = attrNormal
		if s.types != nil {
			t.attrs[i] = typeAttr(s.types[i])
		}
	}
	for id, a := range s.attrs {
		if id >= 0 && int(id) < n {
			t.attrs[id] |= a
		}
	}
	if err := t.initModel(s); err != nil {
		return nil, err
	}
	if err := t.initSpecials(s); err != nil {
		return nil, err
	}
	return t, nil
}

func typeAttr(tt int32) attr {
	switch tt {
	case typeUnknown:
		return attrUnknown
	case typeUnused:
		return attrUnused
	case typeNormal:
		return attrNormal
	case typeControl:
		return attrControl
	case typeUserDefined:
		return attrUserDefined
	case typeByte:
		return attrByte
	}
	return 0
}

// initModel sets the algorithm's defaults and tables.
func (t *Tokenizer) initModel(s *spec) error {
	t.bos, t.eos, t.eot, t.eom, t.unk, t.pad = NoToken, NoToken, NoToken, NoToken, NoToken, NoToken
	switch s.kind {
	case KindSPM:
		t.bos, t.eos, t.unk = 1, 2, 0
		t.addBOS, t.addSpacePrefix = true, true
	case KindBPE:
		t.bos, t.eos = 11, 11
		if s.pre == "" {
			s.pre = "default"
		}
		newSplit := func() (*pretokenizer, error) { return newPretokenizer(s.pre) }
		if s.chain != nil {
			newSplit = func() (*pretokenizer, error) { return compileChain(s.chain, false) }
		}
		sp, err := newSplit()
		if err != nil {
			return err
		}
		t.split = sp
		if fam := preAliases[s.pre]; fam == "llama3" && !strings.Contains(s.pre, "glm") {
			t.ignoreMerges = s.pre != "dbrx" && s.pre != "smaug-bpe"
			t.addBOS = t.ignoreMerges
		}
		if s.pre == "glm4" || s.pre == "chatglm-bpe" {
			t.bos = NoToken
		}
		t.bl = newByteLevel()
	case KindBPERaw:
		t.bos, t.eos = NoToken, NoToken
	}
	if s.ignoreMerges != nil {
		t.ignoreMerges = *s.ignoreMerges
	}
	if s.addSpacePrefix != nil {
		t.addSpacePrefix = *s.addSpacePrefix
	}
	if s.kind != KindSPM {
		if err := t.initMerges(s); err != nil {
			return err
		}
	}
	for b := range 256 {
		t.byteTok[b] = NoToken
		if id, ok := t.toID.lookup(fmt.Sprintf("<0x%02X>", b)); ok {
			t.byteTok[b] = id
		} else if id, ok := t.toID.lookup(string([]byte{byte(b)})); ok && s.kind == KindSPM {
			t.byteTok[b] = id
		}
	}
	if t.bl != nil {
		for b := range 256 {
			t.byteSym[b] = t.symbol(string(t.bl.enc[b]))
		}
	}
	return nil
}

// symbol returns the BPE symbol id of a string: its token id, or an extra id
// past the vocabulary for strings that are not tokens.
func (t *Tokenizer) symbol(s string) int32 {
	if id, ok := t.toID.lookup(s); ok {
		return id
	}
	if id, ok := t.extraID[s]; ok {
		return id
	}
	if t.extraID == nil {
		t.extraID = map[string]int32{}
	}
	id := int32(t.text.len() + len(t.extra))
	t.extra = append(t.extra, s)
	t.extraID[s] = id
	return id
}

// initMerges resolves every merge to symbols, then fills the merge table
// in a second, tight loop whose independent table accesses the CPU can
// overlap (one loop doing both is bound by one cache miss at a time).
func (t *Tokenizer) initMerges(s *spec) error {
	n := s.mergeCount()
	pending := make([]mergeSlot, 0, n)
	var buf []byte
	guess := 0 // vocabularies usually number merge results in merge order
	for rank := range n {
		a, b, ok := s.merge(rank)
		if !ok {
			continue // malformed: can never apply
		}
		l, r := t.symbol(a), t.symbol(b)
		res := int32(-1)
		for _, g := range [...]int{guess + 1, rank + 256} {
			if g >= 0 && g < t.text.len() && isConcat(t.text.at(int32(g)), a, b) {
				res = int32(g)
				break
			}
		}
		if res < 0 {
			buf = append(append(buf[:0], a...), b...)
			res = t.symbol(string(buf))
		}
		if int(res) < t.text.len() {
			guess = int(res)
		}
		pending = append(pending, mergeSlot{key: pairKey(l, r), rank1: int32(rank) + 1, result: res})
	}
	t.merges = newMergeTable(len(pending))
	for _, m := range pending {
		t.merges.add(m.key, m.rank1-1, m.result) // a repeated pair keeps its first rank
	}
	return nil
}

func isConcat(s, a, b string) bool {
	return len(s) == len(a)+len(b) && s[:len(a)] == a && s[len(a):] == b
}

// initSpecials resolves special ids, add_bos/add_eos, EOT/EOG detection
// and the special-token list, following llama_vocab::impl::load.
func (t *Tokenizer) initSpecials(s *spec) error {
	n := int64(t.text.len())
	ids := map[string]int32{"bos": t.bos, "eos": t.eos, "unknown": t.unk}
	for _, k := range specialKeys {
		if _, ok := ids[k]; !ok {
			ids[k] = NoToken
		}
		if ids[k] >= 0 && int64(ids[k]) >= n {
			ids[k] = NoToken
		}
		if v, ok := s.special[k]; ok && v >= 0 && v < n {
			ids[k] = int32(v)
		} else if ok && v == -2 {
			ids[k] = NoToken
		}
	}
	if s.addBOS != nil {
		t.addBOS = *s.addBOS
	}
	if s.addEOS != nil {
		t.addEOS = *s.addEOS
	}
	if t.addBOS && ids["bos"] == NoToken {
		return fmt.Errorf("%w: add_bos_token is true but there is no BOS token", ErrInvalidVocab)
	}
	if t.addEOS && ids["eos"] == NoToken {
		return fmt.Errorf("%w: add_eos_token is true but there is no EOS token", ErrInvalidVocab)
	}
	t.detectByText(ids)
	t.markUnused()
	t.bos, t.eos, t.eot, t.eom, t.unk, t.pad = ids["bos"], ids["eos"], ids["eot"], ids["eom"], ids["unknown"], ids["padding"]
	t.buildEOG(ids)
	t.buildSpecialList()
	t.applyStripRules(s.name)
	return nil
}

// Token texts llama.cpp recognises when metadata does not name the role.
var autoDetect = []struct {
	role  string
	texts []string
}{
	{"eot", []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"}},
	{"eom", []string{"<|eom_id|>"}},
	{"fim_pre", []string{"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>"}},
	{"fim_suf", []string{"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>"}},
	{"fim_mid", []string{"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>"}},
	{"fim_pad", []string{"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}},
	{"fim_rep", []string{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}},
	{"fim_sep", []string{"<|file_sep|>"}},
}

// eogTexts are the token texts llama.cpp always treats as end of generation.
var eogTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
	"<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
	"<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~["}

func (t *Tokenizer) detectByText(ids map[string]int32) {
	for _, d := range autoDetect {
		if ids[d.role] != NoToken {
			continue
		}
		// llama.cpp takes whichever candidate its hash map yields first; the
		// list order is used here, which gives the documented EOT of Qwen
		// (<|im_end|>) and Llama 3 (<|eot_id|>).
		for _, txt := range d.texts {
			if id, ok := t.toID.lookup(txt); ok {
				ids[d.role] = id
				t.attrs[id] |= attrControl
				break
			}
		}
	}
}

func (t *Tokenizer) markUnused() {
	for id, a := range t.attrs {
		if a&attrControl != 0 && strings.Contains(t.text.at(int32(id)), "unused") {
			t.attrs[id] |= attrUnused
		}
	}
}

func (t *Tokenizer) buildEOG(ids map[string]int32) {
	set := map[int32]struct{}{}
	for _, k := range []string{"fim_pad", "fim_rep", "fim_sep"} {
		if ids[k] != NoToken {
			set[ids[k]] = struct{}{}
		}
	}
	for _, txt := range eogTexts {
		if id, ok := t.toID.lookup(txt); ok {
			set[id] = struct{}{}
			t.attrs[id] |= attrControl
		}
	}
	for _, txt := range []string{"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"} {
		if id, ok := t.toID.lookup(txt); ok {
			t.attrs[id] = attrUserDefined
		}
	}
	for _, k := range []string{"eos", "eot", "eom"} {
		if ids[k] != NoToken {
			set[ids[k]] = struct{}{}
		}
	}
	has := func(txt string) (int32, bool) {
		id, ok := t.toID.lookup(txt)
		if !ok {
			return NoToken, false
		}
		_, in := set[id]
		return id, in
	}
	_, ret := has("<|return|>")
	_, call := has("<|call|>")
	_, calls := has("<|calls|>")
	_, flush := has("<|flush|>")
	if end, ok := has("<|end|>"); ok && ((ret && (call || calls)) || ((call || calls) && flush)) {
		delete(set, end)
		t.attrs[end] = attrUserDefined
	}
	if _, tr := has("<|tool_response>"); tr {
		if s, ok := has("</s>"); ok {
			delete(set, s)
			t.attrs[s] = attrNormal
		}
	}
	t.eogSet = set
	for id := range set {
		t.eog = append(t.eog, id)
	}
	slices.Sort(t.eog)
}

func (t *Tokenizer) buildSpecialList() {
	for id, a := range t.attrs {
		if a&(attrControl|attrUserDefined|attrUnknown) != 0 {
			t.specials = append(t.specials, int32(id))
		}
	}
	slices.SortStableFunc(t.specials, func(a, b int32) int {
		return len(t.text.at(b)) - len(t.text.at(a))
	})
	for _, id := range t.specials {
		if t.attrs[id]&(attrControl|attrUnknown) == 0 {
			t.userDefined = append(t.userDefined, id)
		}
	}
}

// applyStripRules sets llama.cpp's per-model lstrip/rstrip attributes.
func (t *Tokenizer) applyStripRules(name string) {
	name = strings.ToLower(name)
	if !strings.Contains(name, "phi-3") && !strings.Contains(name, "phi3") {
		return
	}
	for _, id := range t.specials {
		t.attrs[id] |= attrRstrip
	}
	if id, ok := t.toID.lookup("</s>"); ok {
		t.attrs[id] |= attrRstrip
	}
	for _, txt := range []string{"<unk>", "<s>", "<|endoftext|>"} {
		if id, ok := t.toID.lookup(txt); ok {
			t.attrs[id] &^= attrRstrip
		}
	}
}

// initPieces computes the output text of every token (llama.cpp's
// token_to_piece with special=true; Piece hides control tokens). Only
// decoding needs it, so it runs on first use (see pieceTable).
func (t *Tokenizer) initPieces() {
	off := make([]uint32, t.text.len()+1)
	buf := make([]byte, 0, t.text.len()*7)
	for id := range int32(t.text.len()) {
		txt, a := t.text.at(id), t.attrs[id]
		switch {
		case a&(attrControl|attrUnknown|attrUserDefined) != 0:
			buf = append(buf, txt...)
		case a&attrNormal != 0:
			if t.kind == KindBPE {
				buf = t.bl.decode(buf, txt)
			} else {
				buf = appendUnescaped(buf, txt)
			}
		case a&attrByte != 0:
			if b, ok := parseByteToken(txt); ok {
				buf = append(buf, b)
			}
		}
		off[id+1] = uint32(len(buf))
	}
	t.pieces, t.pieceOff = buf, off
}

// appendUnescaped appends s with every "▁" turned into a space.
func appendUnescaped(dst []byte, s string) []byte {
	for {
		i := strings.Index(s, "▁")
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(append(dst, s[:i]...), ' ')
		s = s[i+len("▁"):]
	}
}

// parseByteToken reads "<0xNN>".
func parseByteToken(s string) (byte, bool) {
	if len(s) != 6 || s[:3] != "<0x" || s[5] != '>' {
		return 0, false
	}
	var v byte
	for _, c := range []byte(s[3:5]) {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | (c - '0')
		case c >= 'A' && c <= 'F':
			v = v<<4 | (c - 'A' + 10)
		case c >= 'a' && c <= 'f':
			v = v<<4 | (c - 'a' + 10)
		default:
			return 0, false
		}
	}
	return v, true
}
