package engine

import "context"

// CountTokens renders a chat request with its model's template (tools and
// tool choice applied as Chat applies them) and returns the number of
// prompt tokens, without generating. The model is loaded when it is not.
func (m *Manager) CountTokens(ctx context.Context, req ChatRequest) (int, error) {
	req, err := applyToolChoice(req)
	if err != nil {
		return 0, err
	}
	e, _, err := m.acquire(ctx, req.Model, loadWant{numCtx: req.Options.NumCtx})
	if err != nil {
		return 0, err
	}
	defer m.release(e, req.Options.KeepAlive)
	text, err := renderChat(ctx, e, req)
	if err != nil {
		return 0, err
	}
	// The rendered template carries its own BOS text when the model wants one.
	prompt, err := encode(ctx, e, text, false)
	if err != nil {
		return 0, err
	}
	return len(prompt), nil
}
