package tokenizer

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// A pre-tokenizer splits text into words before BPE. Like llama.cpp's
// unicode_regex_split it is a chain of steps; each step splits every chunk
// of the previous step into its matches and the gaps between them.
type pretokenizer struct {
	steps []step
	// collapse / wide tell which transformed texts the regex steps need.
	collapse, wide bool
	regex          bool // some step is a regex (not a hand-written splitter)
}

type stepKind int

const (
	stepLlama3 stepKind = iota
	stepQwen2
	stepGPT2
	stepRegex
)

type step struct {
	kind      stepKind
	re        *splitRegex
	collapsed bool // run on the category-collapsed text (pattern used \p{..})
}

// Regexes of llama.cpp's llm_tokenizer_bpe (src/llama-vocab.cpp), by family.
const (
	reGPT2Words  = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)`
	reLlama3     = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	reQwen2      = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	reCJK        = `[一-龥ࠀ-一가-퟿]+`
	reDeepseekV3 = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"
)

// families maps tokenizer.ggml.pre values to their regex chains; "*llama3",
// "*qwen2" and "*gpt2" name the hand-written splitters.
var familyRegexes = map[string][]string{
	"default":        {`[\p{P}\$\+<=>\^~\|]+`, "*gpt2", `\p{N}+`, `[0-9][0-9][0-9]`},
	"llama3":         {"*llama3"},
	"qwen2":          {"*qwen2"},
	"gpt2":           {"*gpt2"},
	"starcoder":      {`\p{N}`, "*gpt2"},
	"falcon":         {`[\p{P}\$\+<=>\^~\|` + "`" + `]+`, "*gpt2", `[0-9][0-9][0-9]`},
	"deepseek-llm":   {`[\r\n]`, `\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\u1F7Dᾀ-ᾴᾶ-ᾼ\u1FBEῂ-ῄῆ-ῌῐ-\u1FD3ῖ-\u1FDBῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\u2126ℨ\u212A-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+`, `\s?[!-/:-~！-／：-～‘-‟　-。]+`, `\s+\z`, reCJK, `\p{N}+`},
	"deepseek-coder": {`[\r\n]`, `\s?\p{L}+`, `\s?\p{P}+`, reCJK, `\p{N}`},
	"deepseek-v3":    {`\p{N}{1,3}`, `[一-龥぀-ゟ゠-ヿ]+`, reDeepseekV3},
	"poro":           {` ?[^(\s|.,!?…。，、।۔،)]+`},
	"viking":         {` ?[^(\s|.,!?…。，、।۔،)]+`, `\p{N}`},
	"seed-coder":     {`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+`},
	"bailingmoe":     {`'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+`},
	"qwen35":         {`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`},
}

// preAliases maps every supported tokenizer.ggml.pre value to its family
// (the grouping of llama.cpp's LLAMA_VOCAB_PRE_TYPE_*).
var preAliases = map[string]string{
	"default": "default", "": "default",
	"llama3": "llama3", "llama-v3": "llama3", "llama-bpe": "llama3", "falcon3": "llama3", "falcon-h1": "llama3",
	"pixtral": "llama3", "midm-2.0": "llama3", "lfm2": "llama3", "dbrx": "llama3", "smaug-bpe": "llama3",
	"glm4": "llama3", "chatglm-bpe": "llama3", "jina-v5-nano": "llama3",
	"qwen2": "qwen2", "deepseek-r1-qwen": "qwen2", "kormo": "qwen2", "f2llmv2": "qwen2", "stablelm2": "qwen2",
	"hunyuan": "qwen2", "megrez": "qwen2", "solar-open": "qwen2", "grok-2": "qwen2",
	"qwen35": "qwen35",
	"gpt-2":  "gpt2", "phi-2": "gpt2", "jina-es": "gpt2", "jina-de": "gpt2", "gigachat": "gpt2", "jina-v2-es": "gpt2",
	"jina-v2-de": "gpt2", "a.x-4.0": "gpt2", "mellum": "gpt2", "modern-bert": "gpt2", "jina-v1-en": "gpt2",
	"jina-v2-code": "gpt2", "roberta-bpe": "gpt2", "exaone4": "gpt2", "mpt": "gpt2", "olmo": "gpt2", "jais": "gpt2",
	"trillion": "gpt2", "granite-docling": "gpt2",
	"starcoder": "starcoder", "refact": "starcoder", "command-r": "starcoder", "smollm": "starcoder",
	"codeshell": "starcoder", "exaone": "starcoder", "minerva-7b": "starcoder", "mellum2": "starcoder",
	"falcon":       "falcon",
	"deepseek-llm": "deepseek-llm", "deepseek-coder": "deepseek-coder",
	"deepseek-v3": "deepseek-v3", "hunyuan-dense": "deepseek-v3", "joyai-llm": "deepseek-v3",
	"poro-chat": "poro", "bloom": "poro", "gpt3-finnish": "poro",
	"viking": "viking", "seed-coder": "seed-coder",
	"bailingmoe": "bailingmoe", "bailingmoe2": "bailingmoe", "llada-moe": "bailingmoe",
}

// supportedPre lists the accepted tokenizer.ggml.pre values, for errors.
func supportedPre() string {
	names := make([]string, 0, len(preAliases))
	for k := range preAliases {
		if k != "" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// newPretokenizer builds the chain for a tokenizer.ggml.pre value.
func newPretokenizer(pre string) (*pretokenizer, error) {
	fam, ok := preAliases[pre]
	if !ok {
		return nil, fmt.Errorf("%w: unknown pre-tokenizer %q (supported: %s)", ErrUnsupported, pre, supportedPre())
	}
	return compileChain(familyRegexes[fam], true)
}

// compileChain compiles regexes the way llama.cpp runs them (llamaCompat:
// \p{..} classes are matched on a category-collapsed text, non-ASCII white
// space is seen as \v) or, for tokenizer.json patterns, on the real text.
func compileChain(exprs []string, llamaCompat bool) (*pretokenizer, error) {
	p := &pretokenizer{}
	for _, e := range exprs {
		switch e {
		case "*llama3":
			p.steps = append(p.steps, step{kind: stepLlama3})
			continue
		case "*qwen2":
			p.steps = append(p.steps, step{kind: stepQwen2})
			continue
		case "*gpt2":
			p.steps = append(p.steps, step{kind: stepGPT2})
			continue
		}
		st := step{kind: stepRegex}
		pat := e
		if llamaCompat {
			if hasCategory(e) {
				pat, st.collapsed = collapseRegex(e), true
				p.collapse = true
			} else {
				p.wide = true
			}
		}
		re, err := compileSplitRegex(e, pat)
		if err != nil {
			return nil, err
		}
		st.re = re
		p.regex = true
		p.steps = append(p.steps, st)
	}
	return p, nil
}

var categoryClass = map[string]string{
	`\p{N}`:  `\u00D10-9`,
	`\p{L}`:  `\u00D2A-Za-z`,
	`\p{Lu}`: `\u00D2A-Za-z`, `\p{Ll}`: `\u00D2A-Za-z`, `\p{Lt}`: `\u00D2A-Za-z`, `\p{Lm}`: `\u00D2A-Za-z`, `\p{Lo}`: `\u00D2A-Za-z`,
	`\p{P}`: `\u00D3!-#%-*,-/:-;?-@\[-\]_\{\}`,
	`\p{M}`: `\u00D4`,
	`\p{S}`: `\u00D5\$\+<->\^` + "`" + `\|`,
}

func hasCategory(e string) bool {
	for k := range categoryClass {
		if strings.Contains(e, k) {
			return true
		}
	}
	return false
}

// collapseRegex rewrites \p{..} classes into the collapsed alphabet, as
// llama.cpp's unicode_regex_split does.
func collapseRegex(e string) string {
	var b strings.Builder
	inside := false
	for i := 0; i < len(e); i++ {
		c := e[i]
		if c == '[' && (i == 0 || e[i-1] != '\\') {
			b.WriteByte(c)
			inside = true
			continue
		}
		if inside && c == ']' && e[i-1] != '\\' {
			b.WriteByte(c)
			inside = false
			continue
		}
		if c == '\\' && i+3 < len(e) && e[i+1] == 'p' && e[i+2] == '{' {
			if j := strings.IndexByte(e[i+3:], '}'); j >= 0 {
				if cls, ok := categoryClass[e[i:i+3+j+1]]; ok {
					if !inside {
						b.WriteByte('[')
					}
					b.WriteString(cls)
					if !inside {
						b.WriteByte(']')
					}
					i += 3 + j
					continue
				}
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// collapsedRune maps a code point to llama.cpp's collapsed alphabet.
func collapsedRune(r rune, f uint8) rune {
	if r < 128 {
		return r
	}
	switch {
	case f&cSpace != 0:
		return 0x0B
	case f&cNumber != 0:
		return 0xD1
	case f&cLetter != 0:
		return 0xD2
	case f&cPunct != 0:
		return 0xD3
	case f&cMark != 0:
		return 0xD4
	case f&cSymbol != 0:
		return 0xD5
	}
	return 0xD0
}

// splitScratch holds the buffers of one split call.
type splitScratch struct {
	cps, collapsed, wide []rune
	offs, next           []int
	utf8                 []byte
}

// split returns the byte lengths of text's consecutive words. text must be
// valid UTF-8 (see sanitize); the result aliases sc.
func (p *pretokenizer) split(text string, sc *splitScratch, cls classes) ([]int, error) {
	return p.splitCtx(context.Background(), text, sc, cls)
}

// splitCtx is split, stopping with an error once ctx is done or the regex
// steps spend their time budget (see withRegexBudget).
func (p *pretokenizer) splitCtx(ctx context.Context, text string, sc *splitScratch, cls classes) ([]int, error) {
	if p.regex {
		var cancel context.CancelFunc
		ctx, cancel = withRegexBudget(ctx, len(text))
		defer cancel()
	}
	sc.cps = toRunes(sc.cps, text)
	cps := sc.cps
	if p.collapse || p.wide {
		sc.collapsed, sc.wide = sc.collapsed[:0], sc.wide[:0]
		for _, r := range cps {
			f := cls.of(r)
			if p.collapse {
				sc.collapsed = append(sc.collapsed, collapsedRune(r, f))
			}
			if p.wide {
				w := r
				if r > 0x7F && f&cSpace != 0 {
					w = 0x0B
				}
				sc.wide = append(sc.wide, w)
			}
		}
	}
	offs := append(sc.offs[:0], len(cps))
	for _, st := range p.steps {
		next := sc.next[:0]
		start := 0
		for _, n := range offs {
			var err error
			switch st.kind {
			case stepLlama3:
				next = splitLlama3(cps, cls, start, start+n, 3, next)
			case stepQwen2:
				next = splitLlama3(cps, cls, start, start+n, 1, next)
			case stepGPT2:
				next = splitGPT2(cps, cls, start, start+n, next)
			default:
				src := sc.wide
				if st.collapsed {
					src = sc.collapsed
				}
				if src == nil || len(src) != len(cps) {
					src = cps
				}
				next, err = st.re.split(ctx, src[start:start+n], &sc.utf8, next)
			}
			if err != nil {
				return nil, err
			}
			start += n
		}
		sc.offs, sc.next = next, offs
		offs = next
	}
	// rune counts -> byte counts
	i := 0
	for k, n := range offs {
		b := 0
		for _, r := range cps[i : i+n] {
			b += utf8.RuneLen(r)
		}
		offs[k] = b
		i += n
	}
	return offs, nil
}
