package tui

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/helexa/helexa/internal/fsutil"
	"github.com/helexa/helexa/internal/humanize"
	"github.com/helexa/helexa/pkg/engine"
)

// HelpText lists the slash commands and keys.
const HelpText = `Commands:
  /help                      this help
  /bye                       quit (also Ctrl+D on an empty input)
  /clear                     start a new conversation
  /set system TEXT           set the system prompt (starts a new conversation)
  /set temperature|top_p|top_k|min_p|repeat_penalty|seed|num_predict|num_ctx VALUE
  /set think on|off          enable or disable thinking (models that support it)
  /show info                 architecture, parameters, quant, context, template, file
  /show parameters           the current settings
  /load MODEL                switch to another model (new conversation)
  /save FILE                 save the conversation as JSON
  /stats                     token counts and speeds of the last answer and the session
Keys:
  Enter send · Alt+Enter or Ctrl+J new line · ↑/↓ input history
  Ctrl+C stop the answer or clear the input (on an empty input: twice to quit) · Ctrl+D quit
  PgUp/PgDn, Shift+↑/↓ or the mouse wheel scroll · Ctrl+T show/hide thinking
  (hold Shift to select text with the mouse)`

// command runs a slash command.
func (m *Model) command(line string) tea.Cmd {
	fields := strings.Fields(line)
	name, args := fields[0], fields[1:]
	rest := strings.TrimSpace(strings.TrimPrefix(line, name))
	switch name {
	case "/help", "/?":
		m.addEntry(&entry{kind: kindInfo, text: HelpText})
	case "/bye", "/exit", "/quit":
		return m.quit()
	case "/clear":
		m.clear("Conversation cleared.")
	case "/set":
		return m.set(args, rest)
	case "/show":
		return m.show(args)
	case "/load":
		if len(args) != 1 {
			m.errorf("usage: /load MODEL (a reference such as Qwen/Qwen3-0.6B-GGUF:Q8_0, a .gguf path or a model directory)")
			return nil
		}
		path, err := fsutil.ExpandHome(args[0])
		if err != nil {
			m.errorf("%v", err)
			return nil
		}
		return m.load(fsutil.AbsIfExists(path))
	case "/save":
		if rest == "" {
			m.errorf("usage: /save FILE")
			return nil
		}
		path, err := fsutil.ExpandHome(rest)
		if err != nil {
			m.errorf("%v", err)
			return nil
		}
		m.save(path)
	case "/stats":
		m.addEntry(&entry{kind: kindInfo, text: m.statsText()})
	default:
		m.errorf("unknown command %s; /help lists the commands", name)
	}
	return nil
}

func (m *Model) errorf(format string, args ...any) {
	m.addEntry(&entry{kind: kindError, text: fmt.Sprintf(format, args...)})
}

// clear starts a new conversation.
func (m *Model) clear(note string) {
	m.msgs = nil
	m.past = append(m.past, m.entries...)
	m.entries = nil
	m.ctxUsed = 0
	m.addEntry(&entry{kind: kindInfo, text: note})
}

// set handles /set NAME VALUE.
func (m *Model) set(args []string, rest string) tea.Cmd {
	if len(args) == 0 {
		m.errorf("usage: /set system TEXT | /set think on|off | /set temperature|top_p|top_k|min_p|repeat_penalty|seed|num_predict|num_ctx VALUE")
		return nil
	}
	name := args[0]
	value := strings.TrimSpace(strings.TrimPrefix(rest, name))
	switch name {
	case "system":
		m.system = value
		m.clear(fmt.Sprintf("System prompt set (%d characters); new conversation.", len(value)))
		return nil
	case "think":
		switch strings.ToLower(value) {
		case "on", "true", "1":
			t := true
			m.think = &t
		case "off", "false", "0":
			t := false
			m.think = &t
		default:
			m.errorf("usage: /set think on|off")
			return nil
		}
		m.addEntry(&entry{kind: kindInfo, text: "Thinking " + value + "."})
		return nil
	}
	if value == "" || strings.ContainsAny(value, " \t") {
		m.errorf("usage: /set %s VALUE", name)
		return nil
	}
	reload, err := m.setOption(name, value)
	if err != nil {
		m.errorf("%v", err)
		return nil
	}
	m.addEntry(&entry{kind: kindInfo, text: fmt.Sprintf("Set %s to %s.", name, value)})
	if reload {
		return m.load(m.model)
	}
	return nil
}

// setOption applies one numeric setting; reload is true for num_ctx.
func (m *Model) setOption(name, value string) (reload bool, err error) {
	f := func() (float32, error) {
		v, err := strconv.ParseFloat(value, 32)
		if err != nil {
			return 0, fmt.Errorf("/set %s: %q is not a number", name, value)
		}
		return float32(v), nil
	}
	i := func() (int, error) {
		v, err := strconv.Atoi(value)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("/set %s: %q is not a non-negative integer", name, value)
		}
		return v, nil
	}
	p := m.opts.Sampling // applied only when valid
	s := &p
	switch name {
	case "temperature":
		if s.Temperature, err = f(); err == nil && s.Temperature < 0 {
			err = fmt.Errorf("/set temperature: %s is negative (0 is greedy)", value)
		}
	case "top_p":
		s.TopP, err = f()
	case "top_k":
		s.TopK, err = i()
	case "min_p":
		s.MinP, err = f()
	case "repeat_penalty":
		s.RepeatPenalty, err = f()
	case "seed":
		var v uint64
		v, err = strconv.ParseUint(value, 10, 64)
		if err != nil {
			return false, fmt.Errorf("/set seed: %q is not a non-negative integer", value)
		}
		s.Seed = v
	case "num_predict":
		var n int
		if n, err = i(); err == nil {
			m.opts.MaxTokens = n
		}
	case "num_ctx":
		var n int
		if n, err = i(); err == nil && n < 16 {
			err = fmt.Errorf("/set num_ctx: %d is too small (at least 16)", n)
		}
		if err == nil {
			m.opts.NumCtx = n
			return true, nil
		}
	default:
		return false, fmt.Errorf("unknown setting %q; settable: system, think, temperature, top_p, top_k, min_p, repeat_penalty, seed, num_predict, num_ctx", name)
	}
	if err == nil {
		err = s.Validate()
	}
	if err != nil {
		return false, err
	}
	m.opts.Sampling = p
	m.seeded = m.seeded || name == "seed"
	return false, nil
}

// show handles /show info and /show parameters.
func (m *Model) show(args []string) tea.Cmd {
	what := ""
	if len(args) > 0 {
		what = args[0]
	}
	switch what {
	case "info":
		// Asked off the update loop: a daemon may take a while to answer.
		svc, ctx, model := m.svc, m.ctx, m.model
		m.showing = true
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(ctx, showTimeout)
			defer cancel()
			d, err := svc.Show(ctx, model)
			return shownMsg{model: model, details: d, err: err}
		}
	case "parameters":
		m.addEntry(&entry{kind: kindInfo, text: m.parametersText()})
	default:
		m.errorf("usage: /show info | /show parameters")
	}
	return nil
}

// showTimeout bounds a /show info request.
const showTimeout = 30 * time.Second

// shownMsg carries the answer to /show info.
type shownMsg struct {
	model   string
	details engine.ModelDetails
	err     error
}

func (m *Model) onShown(msg shownMsg) {
	m.showing = false
	if msg.err != nil {
		m.errorf("/show info: %v", msg.err)
		return
	}
	if msg.model == m.model && msg.details.Context > 0 {
		m.details = msg.details
	}
	m.addEntry(&entry{kind: kindInfo, text: FormatDetails(msg.details)})
}

func (m *Model) parametersText() string {
	s := m.opts.Sampling
	var b strings.Builder
	fmt.Fprintf(&b, "temperature %g · top_k %d · top_p %g · min_p %g · repeat_penalty %g\n", s.Temperature, s.TopK, s.TopP, s.MinP, s.RepeatPenalty)
	seed := "random"
	if m.seeded {
		seed = strconv.FormatUint(s.Seed, 10)
	}
	fmt.Fprintf(&b, "seed %s · num_predict %d · num_ctx %d · think %s", seed, m.opts.MaxTokens, m.details.Context, m.thinkText())
	if m.system != "" {
		fmt.Fprintf(&b, "\nsystem: %s", m.system)
	}
	return b.String()
}

func (m *Model) thinkText() string {
	if m.think == nil {
		return "default"
	}
	if *m.think {
		return "on"
	}
	return "off"
}

// FormatDetails renders what /show info prints.
func FormatDetails(d engine.ModelDetails) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  model        %s\n", d.Name)
	fmt.Fprintf(&b, "  architecture %s\n", d.Arch)
	fmt.Fprintf(&b, "  parameters   %s\n", humanize.Count(d.Parameters))
	fmt.Fprintf(&b, "  quantization %s\n", d.Quant)
	fmt.Fprintf(&b, "  context      %d (trained %d)\n", d.Context, d.ContextTrain)
	fmt.Fprintf(&b, "  file         %s (%s)\n", d.Path, humanize.Bytes(d.FileBytes))
	tpl := "none"
	if d.Template != "" {
		tpl = fmt.Sprintf("%d characters", len(d.Template))
	}
	fmt.Fprintf(&b, "  template     %s", tpl)
	return b.String()
}

func (m *Model) save(path string) {
	c := SavedConversation{Model: m.model, System: m.system, Options: m.opts, TemplateKwargs: m.kwargs(), Messages: m.msgs}
	if c.Messages == nil {
		c.Messages = []Message{}
	}
	if err := saveConversation(path, c); err != nil {
		m.errorf("%v", err)
		return
	}
	m.addEntry(&entry{kind: kindInfo, text: fmt.Sprintf("Saved %d messages to %s.", len(m.msgs), path)})
}

func (m *Model) statsText() string {
	if m.last == nil {
		return "No answers yet."
	}
	u := *m.last
	var b strings.Builder
	b.WriteString("Last answer:\n")
	writeUsage(&b, u)
	fmt.Fprintf(&b, "Session (%d %s):\n", m.answers, plural(m.answers, "answer", "answers"))
	writeUsage(&b, m.totals)
	fmt.Fprintf(&b, "Context: %d of %d tokens used", m.ctxUsed, m.details.Context)
	return b.String()
}

func writeUsage(b *strings.Builder, u engine.Usage) {
	fmt.Fprintf(b, "  prompt    %d tokens (%d from cache)", u.PromptTokens, u.CachedTokens)
	if r := PrefillRate(u); r > 0 {
		fmt.Fprintf(b, ", %.1f tok/s", r)
	}
	fmt.Fprintf(b, "\n  generated %d tokens", u.CompletionTokens)
	if r := DecodeRate(u); r > 0 {
		fmt.Fprintf(b, ", %.1f tok/s", r)
	}
	b.WriteString("\n")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
