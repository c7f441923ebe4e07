package tui

import (
	"context"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/helexa/helexa/pkg/engine"
)

// Model is the bubbletea model of the chat.
type Model struct {
	ctx  context.Context
	cfg  Config
	svc  engine.Service
	hist *History
	hc   histCursor

	model   string
	details engine.ModelDetails
	system  string
	opts    engine.Options
	think   *bool
	seeded  bool

	msgs     []Message // the conversation sent with each turn
	entries  []*entry  // the transcript on screen
	past     []*entry  // the transcript /clear took off the screen
	greeting *entry    // the first line, left out of Transcript
	expand   bool      // show finished answers' thinking

	input  textarea.Model
	vp     viewport.Model
	spin   spinner.Model
	md     *markdown
	width  int
	height int
	dark   bool

	gen      *generation // the answer being generated, or nil
	genSeq   int
	loading  *loadState
	ctxUsed  int
	last     *engine.Usage
	totals   engine.Usage
	answers  int
	quitHint bool
	quitting bool
	showing  bool // a /show info request is out
}

// New builds the chat model. ctx bounds every request it makes.
func New(ctx context.Context, cfg Config) *Model {
	hist := cfg.History
	if hist == nil {
		hist = &History{}
	}
	m := &Model{
		ctx: ctx, cfg: cfg, svc: cfg.Service, hist: hist,
		model: cfg.Model, details: cfg.Details, system: cfg.System, opts: cfg.Options,
		think: cfg.Think, seeded: cfg.Seeded, dark: true,
		width: 80, height: 24,
	}
	m.hc.reset(hist)
	m.input = newInput()
	m.vp = viewport.New()
	m.vp.SoftWrap = true
	m.vp.KeyMap = viewportKeys()
	m.vp.MouseWheelEnabled = true
	m.spin = spinner.New(spinner.WithSpinner(spinner.Dot))
	m.md = newMarkdown()
	m.greeting = &entry{kind: kindInfo, text: "Chatting with " + m.model + ". Enter sends, Alt+Enter or Ctrl+J adds a line, Ctrl+C stops an answer, /help lists commands, /bye quits."}
	m.addEntry(m.greeting)
	m.layout()
	return m
}

func newInput() textarea.Model {
	in := textarea.New()
	in.Prompt = "> "
	in.ShowLineNumbers = false
	in.Placeholder = "Send a message (/help for commands)"
	in.DynamicHeight = true
	in.MinHeight = 1
	in.MaxHeight = 8
	in.MaxContentHeight = 100000
	in.CharLimit = 0
	km := textarea.DefaultKeyMap()
	km.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "ctrl+j"))
	km.TransposeCharacterBackward.SetEnabled(false) // Ctrl+T toggles thinking
	km.DeleteCharacterForward = key.NewBinding(key.WithKeys("delete"))
	in.KeyMap = km
	in.Focus()
	return in
}

func viewportKeys() viewport.KeyMap {
	km := viewport.DefaultKeyMap()
	km.PageDown = key.NewBinding(key.WithKeys("pgdown"))
	km.PageUp = key.NewBinding(key.WithKeys("pgup"))
	km.HalfPageUp = key.NewBinding(key.WithKeys("ctrl+u"))
	km.HalfPageDown = key.NewBinding(key.WithKeys("ctrl+d"))
	km.HalfPageUp.SetEnabled(false)
	km.HalfPageDown.SetEnabled(false)
	km.Up = key.NewBinding(key.WithKeys("ctrl+up", "shift+up"))
	km.Down = key.NewBinding(key.WithKeys("ctrl+down", "shift+down"))
	km.Left.SetEnabled(false)
	km.Right.SetEnabled(false)
	return km
}

// Close cancels a generation still running.
func (m *Model) Close() {
	if m.gen != nil {
		m.gen.cancel()
	}
	if m.loading != nil {
		m.loading.cancel()
	}
}

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{textarea.Blink, tea.RequestBackgroundColor}
	if m.cfg.Progress != nil {
		cmds = append(cmds, waitProgress(m.cfg.Progress))
	}
	return tea.Batch(cmds...)
}

// progressMsg is a load/download progress line.
type progressMsg struct{ text string }

func waitProgress(ch <-chan string) tea.Cmd {
	return func() tea.Msg {
		s, ok := <-ch
		if !ok {
			return nil
		}
		return progressMsg{s}
	}
}

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.md.invalidate()
		m.invalidateAll()
		m.layout()
		return m, nil
	case tea.BackgroundColorMsg:
		if d := msg.IsDark(); d != m.dark {
			m.dark = d
			m.md.invalidate()
			m.invalidateAll()
			m.refresh()
		}
		return m, nil
	case tea.KeyPressMsg:
		return m, m.onKey(msg)
	case tea.PasteMsg:
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		m.layout()
		return m, cmd
	case tea.MouseWheelMsg:
		var cmd tea.Cmd
		m.vp, cmd = m.vp.Update(msg)
		return m, cmd
	case deltaMsg:
		return m, m.onDelta(msg)
	case doneMsg:
		return m, m.onDone(msg)
	case loadedMsg:
		return m, m.onLoaded(msg)
	case shownMsg:
		m.onShown(msg)
		return m, nil
	case progressMsg:
		if m.loading != nil {
			m.loading.progress = msg.text
		}
		return m, waitProgress(m.cfg.Progress)
	case spinner.TickMsg:
		if m.gen == nil && m.loading == nil {
			return m, nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return m, cmd
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return m, cmd
}

// onKey handles the keys the chat owns and passes the rest to the input.
func (m *Model) onKey(k tea.KeyPressMsg) tea.Cmd {
	ks := k.String()
	if ks != "ctrl+c" {
		m.quitHint = false
	}
	switch ks {
	case "ctrl+c":
		return m.interrupt()
	case "ctrl+d":
		if m.input.Value() == "" {
			return m.quit()
		}
		m.input, _ = m.input.Update(tea.KeyPressMsg{Code: tea.KeyDelete})
		return nil
	case "enter":
		return m.submit()
	case "ctrl+t":
		m.expand = !m.expand
		m.invalidateAll()
		m.refresh()
		return nil
	case "pgup", "pgdown", "ctrl+up", "ctrl+down", "shift+up", "shift+down", "home", "end":
		if ks == "home" || ks == "end" {
			if m.input.Value() != "" {
				break
			}
			if ks == "home" {
				m.vp.GotoTop()
			} else {
				m.vp.GotoBottom()
			}
			return nil
		}
		var cmd tea.Cmd
		m.vp, cmd = m.vp.Update(k)
		return cmd
	case "up":
		if m.input.Line() == 0 {
			if s, ok := m.hc.prev(m.hist, m.input.Value()); ok {
				m.setInput(s)
			}
			return nil
		}
	case "down":
		if m.input.Line() >= m.input.LineCount()-1 {
			if s, ok := m.hc.next(m.hist); ok {
				m.setInput(s)
			}
			return nil
		}
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	m.layout()
	return cmd
}

func (m *Model) setInput(s string) {
	m.input.SetValue(s)
	m.input.MoveToEnd()
	m.layout()
}

// interrupt is Ctrl+C: stop the answer or the load; clear a draft (and
// only that: quitting stays unarmed); on an empty input, arm quitting,
// then quit.
func (m *Model) interrupt() tea.Cmd {
	switch {
	case m.gen != nil:
		m.gen.cancel()
		m.gen.stopping = true
		return nil
	case m.loading != nil:
		m.loading.cancel()
		return nil
	case m.input.Value() != "":
		m.setInput("")
		m.hc.reset(m.hist)
		m.quitHint = false
		return nil
	case m.quitHint:
		return m.quit()
	default:
		m.quitHint = true
		return nil
	}
}

func (m *Model) quit() tea.Cmd {
	m.quitting = true
	m.Close()
	return tea.Quit
}

// submit is Enter: run a slash command or send a message.
func (m *Model) submit() tea.Cmd {
	text := m.input.Value()
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if m.gen != nil || m.loading != nil {
		m.addEntry(&entry{kind: kindInfo, text: "Still busy: wait for the answer or press Ctrl+C to stop it."})
		return nil
	}
	if err := m.hist.Add(text); err != nil {
		m.addEntry(&entry{kind: kindError, text: err.Error()})
	}
	m.hc.reset(m.hist)
	m.setInput("")
	if strings.HasPrefix(strings.TrimSpace(text), "/") {
		return m.command(strings.TrimSpace(text))
	}
	return m.send(text)
}

// loadState is a /load (or a context-size reload) in progress.
type loadState struct {
	id       int
	model    string
	started  time.Time
	cancel   context.CancelFunc
	progress string
}
