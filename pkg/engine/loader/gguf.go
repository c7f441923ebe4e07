package loader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/hub"
	"github.com/helexa/helexa/pkg/models/chat"
	"github.com/helexa/helexa/pkg/models/format"
	"github.com/helexa/helexa/pkg/models/gguf"
	"github.com/helexa/helexa/pkg/models/modelfile"
	"github.com/helexa/helexa/pkg/models/tokenizer"
)

// Resolver turns a model reference into files on disk (hub.Client, pulling
// what the cache lacks).
type Resolver interface {
	Resolve(ctx context.Context, ref string) (*hub.Resolved, error)
}

// Files is the engine's Loader of model files: it resolves a reference
// through the hub (a local .gguf path or model directory, or
// org/repo[:QUANT] downloaded into the Hugging Face cache), opens the
// model once (modelfile: a GGUF file or a Hugging Face safetensors
// directory, see loadHF), reads the tokenizer and chat template from it,
// and hands it to the executor: the local executor in-process, or a
// runner process through Exec.
type Files struct {
	Hub Resolver
	// Options are every model's load options; zero values take the
	// executor's defaults. NumCtx, Parallel and TP come from each load's
	// engine.LoadOptions (loadOptions).
	Options executor.LoadOptions
	// Exec starts the executor; nil runs the local executor in-process.
	Exec ExecStarter
	// ChatTemplate, when set, is the Jinja source used instead of every
	// model's own chat template (HELEXA_CHAT_TEMPLATE).
	ChatTemplate string
	// Wrap, when set, wraps every model's executor once it has started,
	// given the model's tokenizer (tests script generation with
	// replay.Text). On error the loader closes ex and fails the load.
	Wrap func(ex executor.Executor, tok *tokenizer.Tokenizer) (executor.Executor, error)
	Log  *slog.Logger

	mu       sync.Mutex
	resolved map[string]*hub.Resolved // by Resolve, for the Load that follows
}

// ExecStarter starts the executor of an open model: in a runner process
// (rpc.Remote, from m.Path), or elsewhere. The loader keeps m open for the
// model's text side and closes it after the executor.
type ExecStarter interface {
	StartExecutor(ctx context.Context, name string, m *modelfile.Model, o executor.LoadOptions) (executor.Executor, error)
}

// loadOptions are a load's executor options: the loader's, with the
// context (numCtx, already capped at the model's training context), the
// parallel sequences and the tensor-parallel ranks the engine asks for.
func (l *Files) loadOptions(numCtx int, opts engine.LoadOptions) executor.LoadOptions {
	o := l.Options
	o.NumCtx, o.Parallel, o.TP = numCtx, opts.NumParallel, max(1, opts.TP)
	return o
}

// startExecutor starts the model's executor through l.Exec, or in-process,
// and wraps it with l.Wrap.
func (l *Files) startExecutor(ctx context.Context, name string, mf *modelfile.Model, tok *tokenizer.Tokenizer, numCtx int, opts engine.LoadOptions) (executor.Executor, error) {
	o := l.loadOptions(numCtx, opts)
	var ex executor.Executor
	var err error
	switch {
	case l.Exec != nil:
		ex, err = l.Exec.StartExecutor(ctx, name, mf, o)
	case o.TP > 1:
		err = fmt.Errorf("tensor parallelism (tp %d) needs worker processes, and this engine starts none", o.TP)
	default:
		ex, err = local.New(mf, local.Options{LoadOptions: o})
	}
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		if executor.KindOf(err) == executor.KindDevice {
			return nil, &engine.Error{Kind: engine.KindInternal, Msg: fmt.Sprintf("loading %s failed", mf.Path), Err: err}
		}
		return nil, &engine.Error{Kind: engine.KindBadRequest, Msg: fmt.Sprintf("loading %s failed", mf.Path), Err: err}
	}
	if l.Wrap == nil {
		return ex, nil
	}
	wrapped, err := l.Wrap(ex, tok)
	if err != nil {
		_ = ex.Close()
		return nil, &engine.Error{Kind: engine.KindBadRequest, Msg: fmt.Sprintf("wrapping the executor of %s failed", mf.Path), Err: err}
	}
	return wrapped, nil
}

var (
	_ engine.Loader        = (*Files)(nil)
	_ engine.SizeEstimator = (*Files)(nil)
	_ engine.NameResolver  = (*Files)(nil)
)

// Resolve implements engine.NameResolver: the reference is resolved (and
// pulled when missing) before the engine evicts anything for it; Load
// uses the result.
func (l *Files) Resolve(ctx context.Context, name string) error {
	res, err := l.resolve(ctx, name)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.resolved == nil {
		l.resolved = map[string]*hub.Resolved{}
	}
	l.resolved[name] = res
	return nil
}

// take returns what Resolve found for name, or resolves it now.
func (l *Files) take(ctx context.Context, name string) (*hub.Resolved, error) {
	l.mu.Lock()
	res, ok := l.resolved[name]
	delete(l.resolved, name)
	l.mu.Unlock()
	if ok {
		return res, nil
	}
	return l.resolve(ctx, name)
}

func (l *Files) resolve(ctx context.Context, name string) (*hub.Resolved, error) {
	if looksLikePath(name) {
		if _, err := os.Stat(name); errors.Is(err, os.ErrNotExist) {
			return nil, &engine.Error{Kind: engine.KindNotFound, Msg: fmt.Sprintf("model file %s does not exist", name), Err: err}
		}
	}
	res, err := l.Hub.Resolve(ctx, name)
	if err != nil {
		return nil, resolveError(name, err)
	}
	return res, nil
}

// Load implements Loader.
func (l *Files) Load(ctx context.Context, name string, opts engine.LoadOptions) (*engine.Model, error) {
	log := l.Log
	if log == nil {
		log = slog.Default()
	}
	res, err := l.take(ctx, name)
	if err != nil {
		return nil, err
	}
	switch res.Format {
	case hub.FormatSafetensors:
		return l.loadHF(ctx, res, opts, log)
	case hub.FormatGGUF:
	default:
		return nil, engine.Errorf(engine.KindBadRequest, "model %q has format %q; helexa loads GGUF files and Hugging Face safetensors directories", name, res.Format)
	}
	mf, err := modelfile.Open(res.ModelPath)
	if err != nil {
		return nil, &engine.Error{Kind: engine.KindBadRequest, Msg: fmt.Sprintf("opening %s failed", res.ModelPath), Err: err}
	}
	m, err := l.build(ctx, mf, res, opts, log)
	if err != nil {
		_ = mf.Close()
		return nil, err
	}
	return m, nil
}

func (l *Files) build(ctx context.Context, mf *modelfile.Model, res *hub.Resolved, opts engine.LoadOptions, log *slog.Logger) (*engine.Model, error) {
	f := mf.GGUF
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		return nil, &engine.Error{Kind: engine.KindBadRequest, Msg: fmt.Sprintf("%s: reading the tokenizer failed", res.ModelPath), Err: err}
	}
	numCtx := opts.NumCtx
	if train := int(f.UintOr(f.Arch()+".context_length", 0)); train > 0 && numCtx > train {
		log.Info("context capped at the model's training context", "asked", numCtx, "train", train)
		numCtx = train
	}
	tpl, tplErr := chat.FromGGUF(f, log)
	if l.ChatTemplate != "" {
		tpl, tplErr = chat.FromGGUFWith(f, l.ChatTemplate)
	}
	if err := templateBudgetError(res.Ref, tplErr); err != nil {
		return nil, err
	}
	ex, err := l.startExecutor(ctx, res.Ref, mf, tok, numCtx, opts)
	if err != nil {
		return nil, err
	}
	m := &engine.Model{
		Executor:  ex,
		Tokenizer: newEngineTokenizer(tok),
		Closer:    mf.Close,
		Details:   details(f, res, ex.Info()),
	}
	setChat(m, tpl, tplErr, tok, res.Ref, log)
	return m, nil
}

// templateBudgetError fails the load of a model whose chat template went
// past a template budget at compile (a *chat.LimitError: it is over
// chat.MaxSourceBytes or nests past the parse depth), naming the model, where the template came from (the
// error's prefix: the GGUF's tokenizer.chat_template, the directory's
// tokenizer_config.json, chat_template.jinja or chat_template.json, or
// HELEXA_CHAT_TEMPLATE) and the limit. Such a template is made to exhaust
// the engine, not a feature it lacks; any other compile error leaves the
// model loaded with chat refused (setChat), so completions still work.
// It runs before the executor starts, so a refused model costs no weights.
func templateBudgetError(ref string, err error) error {
	var le *chat.LimitError
	if !errors.As(err, &le) {
		return nil
	}
	return &engine.Error{Kind: engine.KindBadRequest,
		Msg: fmt.Sprintf("model %q does not load: its chat template goes past the template limit on %s (%d)", ref, le.Limit, le.Value), Err: err}
}

// setChat installs the chat template (a broken one is logged and leaves
// chat requests refused) and the model's output format (format.Detect:
// reasoning markers and tool-call family, from the template's markers and
// the vocabulary), detected once here. Both loaders end with it.
func setChat(m *engine.Model, tpl *chat.Template, err error, tok *tokenizer.Tokenizer, ref string, log *slog.Logger) {
	if err != nil {
		log.Warn("chat template unusable; chat requests will be refused", "model", ref, "err", err)
	} else {
		m.Template = chatTemplate{tpl}
		m.Details.Template = tpl.Source()
	}
	src := ""
	if tpl != nil {
		src = tpl.Source()
	}
	hasToken := func(s string) bool { _, ok := tok.TokenID(s); return ok }
	f := format.Detect(src, hasToken)
	m.Output = outputFormat{f}
	think, tools := f.ReasoningMarkers(), f.ToolMarkers()
	switch t := m.Tokenizer.(type) {
	case engineTokenizer:
		t.thinkMarkers, t.toolMarkers = think, tools
		m.Tokenizer = t
	case eogTokenizer:
		t.thinkMarkers, t.toolMarkers = think, tools
		m.Tokenizer = t
	}
}

func details(f *gguf.File, res *hub.Resolved, info executor.Info) engine.ModelDetails {
	var params int64
	bytesByType := map[string]int64{}
	quant := res.Quant
	for _, t := range f.Tensors() {
		params += t.Elements()
		bytesByType[t.Type.String()] += t.Size
		if quant == "" || bytesByType[t.Type.String()] > bytesByType[quant] {
			quant = t.Type.String() // the type holding most of the weights
		}
	}
	if res.Quant != "" {
		quant = res.Quant
	}
	return engine.ModelDetails{
		Name:         res.Ref,
		Path:         res.ModelPath,
		Arch:         f.Arch(),
		Parameters:   params,
		Quant:        quant,
		ContextTrain: info.NCtxTrain,
		VocabSize:    info.NVocab,
		Context:      info.NCtx,
		FileBytes:    f.FileSize(),
	}
}

// EstimateBytes implements SizeEstimator for local files (the file size;
// CPU weights are mapped, so this is what they can take in RAM).
func (l *Files) EstimateBytes(_ context.Context, name string, _ engine.LoadOptions) (int64, error) {
	st, err := os.Stat(name)
	if err != nil {
		return 0, nil
	}
	if st.IsDir() {
		return dirWeightsBytes(name), nil
	}
	return st.Size(), nil
}

// looksLikePath reports a name meant as a file or directory path rather
// than a Hub reference.
func looksLikePath(name string) bool {
	return strings.HasPrefix(name, "/") || strings.HasPrefix(name, "./") || strings.HasPrefix(name, "../") ||
		strings.HasSuffix(strings.ToLower(name), ".gguf")
}

func resolveError(name string, err error) error {
	switch {
	case errors.Is(err, hub.ErrUnknownModel):
		return &engine.Error{Kind: engine.KindNotFound, Err: err}
	case errors.Is(err, hub.ErrBadReference):
		// The hub's errors name the reference and say what is wrong.
		return &engine.Error{Kind: engine.KindBadRequest, Err: err}
	case errors.Is(err, hub.ErrNotFound), errors.Is(err, hub.ErrQuantNotFound),
		errors.Is(err, hub.ErrNotCached), errors.Is(err, hub.ErrNoWeights):
		return &engine.Error{Kind: engine.KindNotFound, Err: err}
	case errors.Is(err, os.ErrNotExist):
		return &engine.Error{Kind: engine.KindNotFound, Msg: fmt.Sprintf("model %q not found", name), Err: err}
	case errors.Is(err, hub.ErrUnreachable):
		return &engine.Error{Kind: engine.KindNotFound, Msg: fmt.Sprintf(
			"model %q is not in the local cache and the Hub cannot be reached (connect, set HF_ENDPOINT to a mirror, or pull it where there is a network)", name), Err: err}
	case errors.Is(err, hub.ErrUnauthorized):
		return &engine.Error{Kind: engine.KindUnauthorized, Msg: fmt.Sprintf("access to model %q denied (set HF_TOKEN, or accept the licence on the Hub)", name), Err: err}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return &engine.Error{Kind: engine.KindInternal, Msg: fmt.Sprintf("resolving model %q failed", name), Err: err}
}

// engineTokenizer adapts tokenizer.Tokenizer (of a GGUF file or a
// Hugging Face tokenizer.json) to the engine's Tokenizer.
type engineTokenizer struct {
	t        *tokenizer.Tokenizer
	maxBytes int // the longest vocabulary string, in bytes
	// toolMarkers and thinkMarkers are the texts of the model's tool-call
	// and reasoning markers, rendered even when they are control tokens.
	toolMarkers, thinkMarkers []string
}

func newEngineTokenizer(t *tokenizer.Tokenizer) engineTokenizer {
	g := engineTokenizer{t: t}
	for id := range t.VocabSize() {
		g.maxBytes = max(g.maxBytes, len(t.TokenText(int32(id))))
	}
	return g
}

// MaxTokenBytes bounds the text one token stands for: a vocabulary
// string is never shorter than the text it decodes to (byte-level BPE and
// SentencePiece both spell text bytes with one or more bytes each).
func (g engineTokenizer) MaxTokenBytes() int { return g.maxBytes }

func (g engineTokenizer) Encode(text string, addSpecial, parseSpecial bool) ([]int32, error) {
	return g.t.Encode(text, addSpecial, parseSpecial)
}

// EncodeContext is Encode stopping once ctx ends (the engine's request).
func (g engineTokenizer) EncodeContext(ctx context.Context, text string, addSpecial, parseSpecial bool) ([]int32, error) {
	return g.t.EncodeContext(ctx, text, addSpecial, parseSpecial)
}
func (g engineTokenizer) IsEOG(id int32) bool { return g.t.IsEOG(id) }

func (g engineTokenizer) TokenText(id int32) string { return g.t.Piece(id, false) }
func (g engineTokenizer) VocabSize() int            { return g.t.VocabSize() }

// chatTemplate adapts chat.Template to the engine's Template.
type chatTemplate struct{ t *chat.Template }

// Render renders in within the template's limits, the output-byte limit
// lowered to in.MaxBytes when that is lower; a render stopped there
// returns an error wrapping engine.ErrRenderTooLong.
func (c chatTemplate) Render(ctx context.Context, in engine.ChatInput) (string, error) {
	t := c.t
	lim := t.Limits()
	bounded := in.MaxBytes > 0 && (lim.OutputBytes == 0 || in.MaxBytes < lim.OutputBytes)
	if bounded {
		lim.OutputBytes = in.MaxBytes
		t = t.WithLimits(lim)
	}
	text, err := t.Render(ctx, chat.Input{
		Messages: in.Messages, Tools: in.Tools, AddGenerationPrompt: in.AddGenerationPrompt, Kwargs: in.Kwargs,
	})
	var le *chat.LimitError
	if bounded && errors.As(err, &le) && le.Limit == chat.LimitOutputBytes {
		return "", fmt.Errorf("%w: %w", engine.ErrRenderTooLong, err)
	}
	return text, err
}
