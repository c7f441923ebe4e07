// Package tui owns the terminal chat UI of `helexa run`: a bubbletea model
// with a streaming, scrollable transcript (answers rendered as markdown),
// a multi-line input with persisted ↑/↓ history, slash commands and a
// status line. It talks to the engine only through engine.Service, so the
// same UI drives an in-process engine.Manager or a daemon via api.Client.
package tui

import (
	"context"
	"fmt"
	"io"

	tea "charm.land/bubbletea/v2"

	"github.com/helexa/helexa/pkg/engine"
)

// Config is what the chat starts with.
type Config struct {
	Service engine.Service
	// Model is the model reference; Details describe it when already
	// loaded (Context is the context size shown in the status line).
	Model   string
	Details engine.ModelDetails
	System  string
	Options engine.Options
	// Think sets the enable_thinking template variable (nil: the
	// template's default).
	Think *bool
	// HideThinking never shows reasoning (only a "thinking…" indicator).
	HideThinking bool
	// History is the ↑/↓ input history (nil: in memory only).
	History *History
	// Progress carries load/download progress lines (may be nil).
	Progress <-chan string
	// Seeded reports that Options.Sampling.Seed was set by the user; when
	// false every answer draws a fresh seed.
	Seeded bool
}

// Run runs the chat UI on in/out until the user quits or ctx ends.
func Run(ctx context.Context, cfg Config, in io.Reader, out io.Writer, opts ...tea.ProgramOption) error {
	m := New(ctx, cfg)
	defer m.Close()
	p := tea.NewProgram(m, append([]tea.ProgramOption{
		tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out),
	}, opts...)...)
	if _, err := p.Run(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	// The UI ran on the alternate screen, which the terminal drops on
	// exit: leave the conversation in the scrollback, as a shell would.
	if _, err := io.WriteString(out, m.Transcript()); err != nil {
		return fmt.Errorf("printing the conversation: %w", err)
	}
	return nil
}
