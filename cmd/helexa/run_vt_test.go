package main

import (
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// vtScreen is a small terminal emulator for the pseudo-terminal test: it
// applies the cursor movement, erase, scroll and insert/delete sequences a
// bubbletea renderer emits to a grid of cells, so the test can read the
// screen the way a user sees it. Styles, modes and OSC strings are ignored.
type vtScreen struct {
	mu         sync.Mutex
	w, h       int
	cells      [][]rune
	x, y       int
	sx, sy     int // saved cursor
	top, bot   int // scroll region
	alt        [][]rune
	pending    []byte
	lastPrint  rune
	inAltFrame bool
}

func newVTScreen(w, h int) *vtScreen {
	s := &vtScreen{w: w, h: h, top: 0, bot: h - 1}
	s.cells = s.blank()
	return s
}

func (s *vtScreen) blank() [][]rune {
	g := make([][]rune, s.h)
	for i := range g {
		g[i] = []rune(strings.Repeat(" ", s.w))
	}
	return g
}

// Write feeds terminal output.
func (s *vtScreen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data := append(s.pending, p...)
	s.pending = nil
	i := 0
	for i < len(data) {
		n, ok := s.step(data[i:])
		if !ok { // incomplete sequence: wait for more
			s.pending = append([]byte(nil), data[i:]...)
			break
		}
		i += n
	}
	return len(p), nil
}

// String is the screen, one line per row, trailing blanks trimmed.
func (s *vtScreen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	lines := make([]string, s.h)
	for i, r := range s.cells {
		lines[i] = strings.TrimRight(strings.ReplaceAll(string(r), "\x00", ""), " ")
	}
	return strings.Join(lines, "\n")
}

func (s *vtScreen) step(b []byte) (int, bool) {
	switch c := b[0]; {
	case c == 0x1b:
		return s.escape(b)
	case c == '\r':
		s.x = 0
	case c == '\n', c == 0x0b, c == 0x0c:
		s.lineFeed()
	case c == '\b':
		s.x = max(0, s.x-1)
	case c == '\t':
		s.x = min(s.w-1, (s.x/8+1)*8)
	case c < 0x20 || c == 0x7f:
	default:
		return s.print(b)
	}
	return 1, true
}

func (s *vtScreen) print(b []byte) (int, bool) {
	r, n := decodeRune(b)
	if n == 0 {
		return 0, false
	}
	wd := ansi.StringWidth(string(r))
	if wd == 0 {
		return n, true
	}
	if s.x+wd > s.w {
		s.x = 0
		s.lineFeed()
	}
	s.cells[s.y][s.x] = r
	if wd == 2 && s.x+1 < s.w {
		s.cells[s.y][s.x+1] = 0
	}
	s.x += wd
	if s.x >= s.w {
		s.x = s.w - 1 // pending wrap, simplified
	}
	s.lastPrint = r
	return n, true
}

func decodeRune(b []byte) (rune, int) {
	if !utf8.FullRune(b) {
		return 0, 0
	}
	r, n := utf8.DecodeRune(b)
	return r, n
}

func (s *vtScreen) lineFeed() {
	if s.y == s.bot {
		s.scrollUp(1)
		return
	}
	s.y = min(s.h-1, s.y+1)
}

func (s *vtScreen) scrollUp(n int) {
	for ; n > 0; n-- {
		copy(s.cells[s.top:s.bot], s.cells[s.top+1:s.bot+1])
		s.cells[s.bot] = []rune(strings.Repeat(" ", s.w))
	}
}

func (s *vtScreen) scrollDown(n int) {
	for ; n > 0; n-- {
		copy(s.cells[s.top+1:s.bot+1], s.cells[s.top:s.bot])
		s.cells[s.top] = []rune(strings.Repeat(" ", s.w))
	}
}

func (s *vtScreen) escape(b []byte) (int, bool) {
	if len(b) < 2 {
		return 0, false
	}
	switch b[1] {
	case '[':
		return s.csi(b)
	case ']', 'P', '_', '^', 'X': // string sequences end with BEL or ST
		for i := 2; i < len(b); i++ {
			if b[i] == 0x07 {
				return i + 1, true
			}
			if b[i] == 0x1b && i+1 < len(b) && b[i+1] == '\\' {
				return i + 2, true
			}
		}
		return 0, false
	case '7':
		s.sx, s.sy = s.x, s.y
	case '8':
		s.x, s.y = s.sx, s.sy
	case 'M':
		if s.y == s.top {
			s.scrollDown(1)
		} else {
			s.y = max(0, s.y-1)
		}
	case 'D':
		s.lineFeed()
	case 'E':
		s.x = 0
		s.lineFeed()
	case '(', ')', '#', ' ':
		if len(b) < 3 {
			return 0, false
		}
		return 3, true
	}
	return 2, true
}

func (s *vtScreen) csi(b []byte) (int, bool) {
	i := 2
	for i < len(b) && (b[i] < 0x40 || b[i] > 0x7e) {
		i++
	}
	if i >= len(b) {
		return 0, false
	}
	params, final := string(b[2:i]), b[i]
	if strings.ContainsAny(params, "?>=<") {
		s.privateMode(params, final)
		return i + 1, true
	}
	var ps []int
	for _, f := range strings.Split(params, ";") {
		f, _, _ = strings.Cut(f, ":")
		n, _ := strconv.Atoi(f)
		ps = append(ps, n)
	}
	arg := func(k, def int) int {
		if k < len(ps) && ps[k] > 0 {
			return ps[k]
		}
		return def
	}
	s.apply(final, arg, ps)
	return i + 1, true
}

func (s *vtScreen) apply(final byte, arg func(int, int) int, ps []int) {
	clampX := func(v int) int { return max(0, min(s.w-1, v)) }
	clampY := func(v int) int { return max(0, min(s.h-1, v)) }
	switch final {
	case 'H', 'f':
		s.y, s.x = clampY(arg(0, 1)-1), clampX(arg(1, 1)-1)
	case 'A':
		s.y = clampY(s.y - arg(0, 1))
	case 'B', 'e':
		s.y = clampY(s.y + arg(0, 1))
	case 'C', 'a':
		s.x = clampX(s.x + arg(0, 1))
	case 'D':
		s.x = clampX(s.x - arg(0, 1))
	case 'E':
		s.x, s.y = 0, clampY(s.y+arg(0, 1))
	case 'F':
		s.x, s.y = 0, clampY(s.y-arg(0, 1))
	case 'G', '`':
		s.x = clampX(arg(0, 1) - 1)
	case 'd':
		s.y = clampY(arg(0, 1) - 1)
	case 'K':
		s.eraseLine(arg(0, 0))
	case 'J':
		s.eraseDisplay(func() int {
			if len(ps) > 0 {
				return ps[0]
			}
			return 0
		}())
	case 'X':
		for k := 0; k < arg(0, 1) && s.x+k < s.w; k++ {
			s.cells[s.y][s.x+k] = ' '
		}
	case '@':
		n := arg(0, 1)
		row := s.cells[s.y]
		copy(row[min(s.w, s.x+n):], row[s.x:])
		for k := s.x; k < min(s.w, s.x+n); k++ {
			row[k] = ' '
		}
	case 'P':
		n := arg(0, 1)
		row := s.cells[s.y]
		copy(row[s.x:], row[min(s.w, s.x+n):])
		for k := max(s.x, s.w-n); k < s.w; k++ {
			row[k] = ' '
		}
	case 'L', 'M':
		if s.y < s.top || s.y > s.bot {
			return
		}
		top := s.top
		s.top = s.y
		if final == 'L' {
			s.scrollDown(arg(0, 1))
		} else {
			s.scrollUp(arg(0, 1))
		}
		s.top = top
	case 'S':
		s.scrollUp(arg(0, 1))
	case 'T':
		s.scrollDown(arg(0, 1))
	case 'r':
		s.top, s.bot = clampY(arg(0, 1)-1), clampY(arg(1, s.h)-1)
		s.x, s.y = 0, 0
	case 'b':
		for k := 0; k < arg(0, 1); k++ {
			s.print([]byte(string(s.lastPrint)))
		}
	case 's':
		s.sx, s.sy = s.x, s.y
	case 'u':
		s.x, s.y = s.sx, s.sy
	}
}

func (s *vtScreen) eraseLine(mode int) {
	row := s.cells[s.y]
	from, to := s.x, s.w
	switch mode {
	case 1:
		from, to = 0, s.x+1
	case 2:
		from, to = 0, s.w
	}
	for k := from; k < min(to, s.w); k++ {
		row[k] = ' '
	}
}

func (s *vtScreen) eraseDisplay(mode int) {
	switch mode {
	case 0:
		s.eraseLine(0)
		for y := s.y + 1; y < s.h; y++ {
			s.cells[y] = []rune(strings.Repeat(" ", s.w))
		}
	case 1:
		s.eraseLine(1)
		for y := 0; y < s.y; y++ {
			s.cells[y] = []rune(strings.Repeat(" ", s.w))
		}
	default:
		s.cells = s.blank()
	}
}

// privateMode handles the alternate screen (1049/1047/47); other private
// modes are ignored.
func (s *vtScreen) privateMode(params string, final byte) {
	if final != 'h' && final != 'l' {
		return
	}
	for _, p := range strings.Split(strings.TrimLeft(params, "?"), ";") {
		if p != "1049" && p != "1047" && p != "47" {
			continue
		}
		if final == 'h' && !s.inAltFrame {
			s.alt, s.cells, s.inAltFrame = s.cells, s.blank(), true
		} else if final == 'l' && s.inAltFrame {
			s.cells, s.alt, s.inAltFrame = s.alt, nil, false
		}
	}
}
