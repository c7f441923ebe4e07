package tokenizer

// Hand-written pre-tokenizers for the hottest regexes. They follow llama.cpp's
// unicode_regex_split_custom_llama3 / _gpt2 exactly; the qwen2 pattern is the
// llama3 one with single digits. Each appends the lengths (in runes) of the
// words of cps[ini:end] to out.

const outOfRange = -1

type runeView struct {
	cps      []rune
	cls      classes
	ini, end int
}

func (v *runeView) cpt(pos int) rune {
	if pos >= v.ini && pos < v.end {
		return v.cps[pos]
	}
	return outOfRange
}

// flags returns the classes of cps[pos] and whether pos is in range.
func (v *runeView) flags(pos int) (uint8, bool) {
	if pos >= v.ini && pos < v.end {
		return v.cls.of(v.cps[pos]), true
	}
	return 0, false
}

func isOther(f uint8, in bool) bool { return in && f&(cSpace|cLetter|cNumber) == 0 }

func lowerASCII(r rune) rune {
	if r >= 'A' && r <= 'Z' {
		return r + 32
	}
	return r
}

// contraction returns the length of 's 't 're 've 'm 'll 'd at pos, or 0.
func (v *runeView) contraction(pos int, fold bool) int {
	if v.cpt(pos) != '\'' || pos+1 >= v.end {
		return 0
	}
	n := v.cpt(pos + 1)
	if fold {
		n = lowerASCII(n)
	}
	if n == 's' || n == 't' || n == 'm' || n == 'd' {
		return 2
	}
	if pos+2 < v.end {
		nn := v.cpt(pos + 2)
		if fold {
			nn = lowerASCII(nn)
		}
		if (n == 'r' && nn == 'e') || (n == 'v' && nn == 'e') || (n == 'l' && nn == 'l') {
			return 3
		}
	}
	return 0
}

// spaces measures the whitespace run at pos; lastNL is the position just
// after its last \r or \n (0 when none).
func (v *runeView) spaces(pos int) (n, lastNL int) {
	for {
		f, in := v.flags(pos + n)
		if !in || f&cSpace == 0 {
			return n, lastNL
		}
		if c := v.cps[pos+n]; c == '\r' || c == '\n' {
			lastNL = pos + n + 1
		}
		n++
	}
}

// splitLlama3 implements
// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,maxDigits}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func splitLlama3(cps []rune, cls classes, ini, end, maxDigits int, out []int) []int {
	v := runeView{cps: cps, cls: cls, ini: ini, end: end}
	prev := ini
	add := func(e int) {
		if e > prev {
			out = append(out, e-prev)
		}
		prev = e
	}
	for pos := ini; pos < end; {
		c := cps[pos]
		f := cls.of(c)
		if n := v.contraction(pos, true); n > 0 {
			pos += n
			add(pos)
			continue
		}
		if !(c == '\r' || c == '\n' || f&cNumber != 0) {
			nf, _ := v.flags(pos + 1)
			if f&cLetter != 0 || nf&cLetter != 0 {
				pos++
				for {
					g, _ := v.flags(pos)
					if g&cLetter == 0 {
						break
					}
					pos++
				}
				add(pos)
				continue
			}
		}
		if f&cNumber != 0 {
			start := pos
			for {
				g, _ := v.flags(pos)
				if g&cNumber == 0 {
					break
				}
				pos++
				if pos-start >= maxDigits {
					add(pos)
					start = pos
				}
			}
			add(pos)
			continue
		}
		f2, in2 := f, true
		if c == ' ' {
			f2, in2 = v.flags(pos + 1)
		}
		if isOther(f2, in2) {
			if c == ' ' {
				pos++
			}
			for isOther(f2, in2) {
				pos++
				f2, in2 = v.flags(pos)
			}
			for c2 := v.cpt(pos); c2 == '\r' || c2 == '\n'; c2 = v.cpt(pos) {
				pos++
			}
			add(pos)
			continue
		}
		nws, lastNL := v.spaces(pos)
		switch {
		case lastNL > 0:
			pos = lastNL
		case nws > 1 && v.cpt(pos+nws) != outOfRange:
			pos += nws - 1
		case nws > 0:
			pos += nws
		default:
			pos++
		}
		add(pos)
	}
	return out
}

// splitGPT2 implements 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
func splitGPT2(cps []rune, cls classes, ini, end int, out []int) []int {
	v := runeView{cps: cps, cls: cls, ini: ini, end: end}
	prev := ini
	add := func(e int) {
		if e > prev {
			out = append(out, e-prev)
		}
		prev = e
	}
	run := func(pos int, want func(uint8, bool) bool) int {
		for {
			f, in := v.flags(pos)
			if !want(f, in) {
				return pos
			}
			pos++
		}
	}
	isL := func(f uint8, in bool) bool { return in && f&cLetter != 0 }
	isN := func(f uint8, in bool) bool { return in && f&cNumber != 0 }
	for pos := ini; pos < end; {
		c := cps[pos]
		if n := v.contraction(pos, false); n > 0 {
			pos += n
			add(pos)
			continue
		}
		f2, in2 := cls.of(c), true
		if c == ' ' {
			f2, in2 = v.flags(pos + 1)
		}
		skip := 0
		if c == ' ' {
			skip = 1
		}
		switch {
		case isL(f2, in2):
			pos = run(pos+skip, isL)
		case isN(f2, in2):
			pos = run(pos+skip, isN)
		case isOther(f2, in2):
			pos = run(pos+skip, isOther)
		default:
			nws, _ := v.spaces(pos)
			switch {
			case nws > 1 && v.cpt(pos+nws) != outOfRange:
				pos += nws - 1
			case nws > 0:
				pos += nws
			default:
				pos++
			}
		}
		add(pos)
	}
	return out
}
