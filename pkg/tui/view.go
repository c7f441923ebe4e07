package tui

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/glamour/v2"
	"charm.land/glamour/v2/styles"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Entry kinds in the transcript.
const (
	kindUser = iota
	kindAssistant
	kindInfo
	kindNotice // an important condition (context full)
	kindError
)

// entry is one block of the transcript.
type entry struct {
	kind      int
	text      string
	reasoning string
	streaming bool
	stopped   bool
	stats     string
	elapsed   time.Duration
	rendered  string // cache; "" = stale
}

var (
	styleUser     = lipgloss.NewStyle().Bold(true)
	styleInfo     = lipgloss.NewStyle().Foreground(lipgloss.Color("8"))
	styleNotice   = lipgloss.NewStyle().Foreground(lipgloss.Color("3")).Bold(true)
	styleError    = lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
	styleStatus   = lipgloss.NewStyle().Foreground(lipgloss.Color("8"))
	styleRule     = lipgloss.NewStyle().Foreground(lipgloss.Color("8"))
	styleThinking = lipgloss.NewStyle().Faint(true).Italic(true)
)

func (m *Model) addEntry(e *entry) {
	m.entries = append(m.entries, e)
	m.touch(e)
}

// Transcript is the whole conversation as the terminal keeps it after
// the chat ends: every entry since the start (those /clear took off the
// screen too) but the greeting, rendered at the current width.
func (m *Model) Transcript() string {
	all := append(append([]*entry(nil), m.past...), m.entries...)
	parts := make([]string, 0, len(all))
	for _, e := range all {
		if e == m.greeting {
			continue
		}
		parts = append(parts, m.render(e))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "\n\n") + "\n"
}

func (m *Model) removeEntry(e *entry) {
	for i, x := range m.entries {
		if x == e {
			m.entries = append(m.entries[:i], m.entries[i+1:]...)
			break
		}
	}
	m.refresh()
}

// touch marks e for re-rendering and refreshes the transcript.
func (m *Model) touch(e *entry) {
	e.rendered = ""
	m.refresh()
}

func (m *Model) invalidateAll() {
	for _, e := range m.entries {
		e.rendered = ""
	}
}

// refresh rebuilds the viewport content, following the bottom when the
// user had not scrolled up.
func (m *Model) refresh() { m.rebuild(m.following()) }

// following reports whether the transcript shows its end (new text
// keeps it there).
func (m *Model) following() bool {
	return m.vp.AtBottom() || m.vp.TotalLineCount() <= m.vp.Height()
}

// rebuild sets the viewport content, going to the end when atBottom.
func (m *Model) rebuild(atBottom bool) {
	parts := make([]string, 0, len(m.entries))
	for _, e := range m.entries {
		if e.rendered == "" {
			e.rendered = m.render(e)
		}
		parts = append(parts, e.rendered)
	}
	m.vp.SetContent(strings.Join(parts, "\n\n"))
	if atBottom {
		m.vp.GotoBottom()
	}
}

// layout sizes the viewport and the input to the window.
// A transcript that showed its end still does afterwards.
func (m *Model) layout() {
	atBottom := m.following()
	m.input.SetWidth(max(10, m.width))
	h := m.height - m.input.Height() - 2 // status line + rule
	m.vp.SetWidth(m.width)
	m.vp.SetHeight(max(1, h))
	m.rebuild(atBottom)
}

// render draws one entry at the current width.
func (m *Model) render(e *entry) string {
	w := max(20, m.width-2)
	wrap := lipgloss.NewStyle().Width(w)
	switch e.kind {
	case kindUser:
		// Continuation lines line up under the first one.
		return styleUser.Render(wrap.Render("› " + strings.ReplaceAll(e.text, "\n", "\n  ")))
	case kindInfo:
		return styleInfo.Render(wrap.Render(e.text))
	case kindNotice:
		return styleNotice.Render(wrap.Render("! " + e.text))
	case kindError:
		return styleError.Render(wrap.Render("error: " + e.text))
	}
	return m.renderAnswer(e, wrap)
}

func (m *Model) renderAnswer(e *entry, wrap lipgloss.Style) string {
	var parts []string
	if t := m.thinkingBlock(e, wrap); t != "" {
		parts = append(parts, t)
	}
	switch {
	case e.streaming:
		if e.text != "" {
			parts = append(parts, wrap.Render(e.text))
		}
	case e.text != "":
		parts = append(parts, m.md.render(e.text, wrap.GetWidth(), m.dark))
	}
	var foot []string
	if e.stopped {
		foot = append(foot, "[stopped]")
	}
	if e.stats != "" {
		foot = append(foot, e.stats)
	}
	if len(foot) > 0 {
		parts = append(parts, styleStatus.Render(strings.Join(foot, " · ")))
	}
	return strings.Join(parts, "\n")
}

// thinkingBlock shows reasoning dimmed while it streams; a finished
// answer's reasoning is collapsed unless Ctrl+T expanded it.
func (m *Model) thinkingBlock(e *entry, wrap lipgloss.Style) string {
	r := strings.TrimSpace(e.reasoning)
	if r == "" {
		return ""
	}
	switch {
	case m.cfg.HideThinking && e.streaming && e.text == "":
		return styleThinking.Render("thinking…")
	case m.cfg.HideThinking:
		return ""
	case e.streaming, m.expand:
		return styleThinking.Render(wrap.Render("Thinking:\n" + r))
	}
	n := strings.Count(r, "\n") + 1
	return styleThinking.Render(fmt.Sprintf("▸ thought for %d %s (Ctrl+T shows it)", n, plural(n, "line", "lines")))
}

// View implements tea.Model.
func (m *Model) View() tea.View {
	if m.quitting {
		return tea.NewView("")
	}
	rule := styleRule.Render(strings.Repeat("─", max(1, m.width)))
	v := tea.NewView(m.vp.View() + "\n" + m.statusLine() + "\n" + rule + "\n" + m.input.View())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "helexa · " + displayName(m.model)
	return v
}

// statusLine is model · context used/size · speed, or what is happening.
func (m *Model) statusLine() string {
	left := displayName(m.model)
	if c := m.details.Context; c > 0 {
		if m.gen != nil {
			left += fmt.Sprintf(" · ctx ~%d/%d", min(m.gen.ctxBase+m.gen.tokens, c), c)
		} else {
			left += fmt.Sprintf(" · ctx %d/%d", m.ctxUsed, c)
		}
	}
	switch {
	case m.loading != nil:
		left = fmt.Sprintf("%s loading %s %.0fs", m.spin.View(), m.loading.model, time.Since(m.loading.started).Seconds())
		if m.loading.progress != "" {
			left += " · " + m.loading.progress
		}
	case m.gen != nil && m.gen.stopping:
		left += " · stopping…"
	case m.gen != nil:
		left += fmt.Sprintf(" · %s generating (%d %s", m.spin.View(), m.gen.tokens, plural(m.gen.tokens, "token", "tokens"))
		if r := m.gen.liveRate(time.Now()); r > 0 {
			left += fmt.Sprintf(", %.1f tok/s", r)
		}
		left += ")"
	case m.last != nil:
		if r := DecodeRate(*m.last); r > 0 {
			left += fmt.Sprintf(" · %.1f tok/s", r)
		}
	}
	if m.think != nil {
		left += " · think " + m.thinkText()
	}
	hint := "/help"
	switch {
	case m.quitHint:
		hint = "Ctrl+C again, Ctrl+D or /bye quits"
	case m.gen != nil, m.loading != nil:
		hint = "Ctrl+C stops"
	}
	return styleStatus.Render(fitLine(left, hint, m.width))
}

// fitLine puts left and right on one line of width cells: right-aligned
// hint when both fit, else left alone, cut with "…" when it is too long.
func fitLine(left, right string, width int) string {
	width = max(1, width)
	gap := width - lipgloss.Width(left) - lipgloss.Width(right)
	if gap >= 1 {
		return left + strings.Repeat(" ", gap) + right
	}
	return ansi.Truncate(left, width, "…")
}

// displayName shortens a model path to its file or directory name.
func displayName(model string) string {
	if filepath.IsAbs(model) {
		return filepath.Base(model)
	}
	return model
}

// markdown renders finished answers with glamour, one renderer per width
// and background.
type markdown struct {
	r     *glamour.TermRenderer
	width int
	dark  bool
}

func newMarkdown() *markdown { return &markdown{} }

func (md *markdown) invalidate() { md.r = nil }

func (md *markdown) render(text string, width int, dark bool) string {
	if md.r == nil || md.width != width || md.dark != dark {
		style := styles.DarkStyle
		if !dark {
			style = styles.LightStyle
		}
		r, err := glamour.NewTermRenderer(glamour.WithStandardStyle(style), glamour.WithWordWrap(width), glamour.WithPreservedNewLines())
		if err != nil {
			return text
		}
		md.r, md.width, md.dark = r, width, dark
	}
	out, err := md.r.Render(text)
	if err != nil {
		return text
	}
	return strings.Trim(out, "\n")
}
