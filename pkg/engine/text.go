package engine

import "context"

// Texter is implemented by engines that expose a model's tokenizer and
// chat template on their own (Manager): llama-server's /tokenize,
// /detokenize and /apply-template use it when the Service has it.
type Texter interface {
	// Tokenize encodes text with the model's tokenizer.
	Tokenize(ctx context.Context, req TokenizeRequest) ([]Piece, error)
	// Detokenize decodes token ids into text.
	Detokenize(ctx context.Context, model string, ids []int32) (string, error)
	// ApplyTemplate renders a chat request's messages and tools with the
	// model's chat template, as Chat would before tokenizing.
	ApplyTemplate(ctx context.Context, req ChatRequest) (string, error)
}

// TokenizeRequest asks for the tokens of a text.
type TokenizeRequest struct {
	Model string `json:"model"`
	Text  string `json:"text"`
	// AddSpecial adds BOS/EOS as the model wants; ParseSpecial recognises
	// special-token text.
	AddSpecial   bool `json:"add_special"`
	ParseSpecial bool `json:"parse_special"`
}

// Piece is one token and the text it stands for on its own.
type Piece struct {
	ID   int32  `json:"id"`
	Text string `json:"piece"`
}

var _ Texter = (*Manager)(nil)

// Tokenize implements Texter (loading the model if needed).
func (m *Manager) Tokenize(ctx context.Context, req TokenizeRequest) ([]Piece, error) {
	e, _, err := m.acquire(ctx, req.Model, loadWant{})
	if err != nil {
		return nil, err
	}
	defer m.release(e, nil)
	if err := fitsInBytes(e, e.model.Tokenizer, req.Text); err != nil {
		return nil, err
	}
	var ids []int32
	err = guard("tokenizing", func() (err error) {
		if ce, ok := e.model.Tokenizer.(contextEncoder); ok {
			ids, err = ce.EncodeContext(ctx, req.Text, req.AddSpecial, req.ParseSpecial)
		} else {
			ids, err = e.model.Tokenizer.Encode(req.Text, req.AddSpecial, req.ParseSpecial)
		}
		return err
	})
	if err != nil {
		return nil, inputError(err, "tokenizing failed")
	}
	out := make([]Piece, len(ids))
	for i, id := range ids {
		out[i] = Piece{ID: id, Text: e.model.Tokenizer.TokenText(id)}
	}
	return out, nil
}

// Detokenize implements Texter: the ids decoded as one stream.
func (m *Manager) Detokenize(ctx context.Context, model string, ids []int32) (string, error) {
	e, _, err := m.acquire(ctx, model, loadWant{})
	if err != nil {
		return "", err
	}
	defer m.release(e, nil)
	n := int32(e.model.Tokenizer.VocabSize())
	for i, id := range ids {
		if id < 0 || id >= n {
			return "", Errorf(KindBadRequest, "tokens[%d] = %d is not a token id of %s (vocabulary of %d)", i, id, model, n)
		}
	}
	var text []byte
	err = guard("detokenizing", func() error {
		dec := e.model.Tokenizer.NewDecoder()
		for _, id := range ids {
			text = append(text, dec.Add(id)...)
		}
		text = append(text, dec.Flush()...)
		return nil
	})
	if err != nil {
		return "", inputError(err, "detokenizing failed")
	}
	return string(text), nil
}

// ApplyTemplate implements Texter.
func (m *Manager) ApplyTemplate(ctx context.Context, req ChatRequest) (string, error) {
	req, err := applyToolChoice(req)
	if err != nil {
		return "", err
	}
	e, _, err := m.acquire(ctx, req.Model, loadWant{numCtx: req.Options.NumCtx})
	if err != nil {
		return "", err
	}
	defer m.release(e, req.Options.KeepAlive)
	if e.model.Template == nil {
		return "", Errorf(KindBadRequest, "model %q has no chat template", req.Model)
	}
	var text string
	err = guard("rendering the chat template", func() (err error) {
		text, err = e.model.Template.Render(ctx, ChatInput{
			Messages: req.Messages, Tools: req.Tools, AddGenerationPrompt: true, Kwargs: req.TemplateKwargs,
		})
		return err
	})
	if err != nil {
		return "", inputError(err, "rendering the chat template failed")
	}
	return text, nil
}
