// Package chat owns chat templates: it renders a model's Jinja chat
// template (tokenizer.chat_template in GGUF, chat_template in
// tokenizer_config.json) exactly like Hugging Face transformers'
// apply_chat_template, with the project's own Jinja engine (internal/jinja)
// and Python's semantics for operators, printing and lookups layered on its
// parsed tree (rewrite.go); every render runs within Limits. What a model's
// generated text means (reasoning, tool calls) is pkg/models/format's.
package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/helexa/helexa/internal/jinja/builtins"
	"github.com/helexa/helexa/internal/jinja/config"
	"github.com/helexa/helexa/internal/jinja/exec"
	"github.com/helexa/helexa/internal/jinja/loaders"
)

// ChatML is the fallback template for models that ship none.
const ChatML = "{%- for message in messages %}" +
	"{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}" +
	"{%- endfor %}" +
	"{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"

// TemplateError is raised by the template itself through
// raise_exception(msg); Message is msg.
type TemplateError struct{ Message string }

func (e *TemplateError) Error() string { return e.Message }

// ErrTemplate wraps every compile and render failure that is not a
// TemplateError (syntax errors, type errors, panics inside the engine).
var ErrTemplate = errors.New("chat template")

// Template is a compiled chat template. It is safe for concurrent use.
type Template struct {
	src      string
	tpl      *exec.Template
	defaults map[string]any   // kwargs defaults (bos_token, eos_token) from the model
	now      func() time.Time // strftime_now's clock; tests pin it
	limits   Limits
}

// Input is what a chat template is rendered with.
type Input struct {
	// Messages is a JSON array of OpenAI-style messages (role; content as a
	// string or list of parts; reasoning_content; tool_calls with arguments
	// as an object or a string; tool results). Key order is preserved.
	Messages json.RawMessage
	// Tools is a JSON array of tool definitions, or nil (None).
	Tools json.RawMessage
	// AddGenerationPrompt appends the assistant turn header.
	AddGenerationPrompt bool
	// Kwargs are extra template variables (enable_thinking, bos_token,
	// eos_token, date_string, ...). json.RawMessage values keep key order;
	// other Go values are converted (maps with sorted keys).
	Kwargs map[string]any
}

// Compile parses a Jinja chat template. A template over MaxSourceBytes, or
// nested past MaxParseDepth, gives a *LimitError.
func Compile(src string) (t *Template, err error) {
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("%w: compile panicked: %v", ErrTemplate, r)
		}
	}()
	if len(src) > MaxSourceBytes {
		return nil, fmt.Errorf("%w: %w (the template is %d bytes)", ErrTemplate,
			&LimitError{Limit: LimitSourceBytes, Value: MaxSourceBytes}, len(src))
	}
	cfg := config.New()
	cfg.TrimBlocks = true
	cfg.LeftStripBlocks = true
	cfg.KeepTrailingNewline = false
	// Jinja2 reads \r\n and \r as \n, in text and in string literals.
	fixed := strings.ReplaceAll(strings.ReplaceAll(src, "\r\n", "\n"), "\r", "\n")
	loader, err := loaders.NewMemoryLoader(map[string]string{"/chat_template": fixed})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTemplate, err)
	}
	tpl, err := exec.NewTemplate("/chat_template", cfg, loader, newEnvironment())
	if err != nil {
		var le *LimitError
		if errors.As(err, &le) {
			return nil, fmt.Errorf("%w: %w", ErrTemplate, le)
		}
		return nil, fmt.Errorf("%w: %s", ErrTemplate, compileMessage(err))
	}
	rewriteTemplate(tpl.Root())
	return &Template{src: src, tpl: tpl, defaults: map[string]any{}, now: time.Now, limits: DefaultLimits()}, nil
}

// compileMessage drops the full template source the engine puts in its parse
// errors ("failed to parse template '<source>': ...").
func compileMessage(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "failed to parse template '") {
		if i := strings.LastIndex(msg, "': "); i >= 0 {
			return "parse error: " + msg[i+3:]
		}
	}
	return msg
}

// Source returns the template text.
func (t *Template) Source() string { return t.src }

// WithDefaults returns a copy of t whose kwargs default to defaults
// (overridden by Input.Kwargs).
func (t *Template) WithDefaults(defaults map[string]any) *Template {
	c := *t
	c.defaults = make(map[string]any, len(t.defaults)+len(defaults))
	for k, v := range t.defaults {
		c.defaults[k] = v
	}
	for k, v := range defaults {
		c.defaults[k] = v
	}
	return &c
}

// Render renders the template for one conversation, within t's Limits.
// A render that runs past a limit fails with a *LimitError (wrapped with
// ErrTemplate); one whose ctx ends fails with ctx's error.
func (t *Template) Render(ctx context.Context, in Input) (out string, err error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if t.limits.RenderTime > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, t.limits.RenderTime,
			&LimitError{Limit: LimitRenderTime, Value: int64(t.limits.RenderTime)})
		defer cancel()
	}
	data, raised, err := t.renderContext(in)
	if err != nil {
		return "", err
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("%w: render panicked: %v", ErrTemplate, r)
		}
	}()
	budget := exec.NewBudget(ctx, t.limits.engine())
	var b strings.Builder
	if rerr := t.tpl.ExecuteBudget(&b, data, budget); rerr != nil {
		return "", t.renderError(rerr, budget, raised)
	}
	return b.String(), nil
}

// renderError picks what a failed render returns: the budget's limit or
// the context's end, else the template's raise_exception, else the
// shortened engine error.
func (t *Template) renderError(rerr error, budget *exec.Budget, raised *raisedError) error {
	if berr := budget.Err(); berr != nil {
		var le *LimitError
		if errors.As(berr, &le) {
			return fmt.Errorf("%w: %w", ErrTemplate, le)
		}
		return berr
	}
	if raised.msg != nil {
		return &TemplateError{Message: *raised.msg}
	}
	return fmt.Errorf("%w: %s", ErrTemplate, renderMessage(rerr.Error()))
}

// Parts of the engine's nested render errors (see renderMessage).
var (
	reErrLine    = regexp.MustCompile(`at line (\d+)`)
	reErrWrapper = regexp.MustCompile(`^(?s).*(?:invalid call to filter '__py_\w+': |ControlStructure\(Line=\d+ Col=\d+\): )`)
	reErrFilter  = regexp.MustCompile(`^unable to evaluate filter &\{<Token.*?> (\w+) .*?\}: (?:invalid call to filter '\w+': )?`)
)

// renderMessage shortens the engine's render error, which nests every enclosing
// expression and our internal filters, to "line N: innermost cause".
func renderMessage(msg string) string {
	lines := reErrLine.FindAllStringSubmatch(msg, -1)
	cause := strings.TrimPrefix(msg, "unable to execute template: ")
	if loc := reErrWrapper.FindStringIndex(cause); loc != nil && loc[1] < len(cause) {
		cause = cause[loc[1]:]
	}
	cause = reErrFilter.ReplaceAllString(cause, "filter $1: ")
	if len(lines) == 0 {
		return cause
	}
	return "line " + lines[len(lines)-1][1] + ": " + cause
}

// raisedError records the message of a raise_exception call during one
// render, so the caller gets it unwrapped from the engine's error chain.
type raisedError struct{ msg *string }

func (t *Template) renderContext(in Input) (*exec.Context, *raisedError, error) {
	vars := map[string]any{}
	for k, v := range t.defaults {
		vars[k] = v
	}
	for k, v := range in.Kwargs {
		cv, err := toTemplateValue(v)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: kwarg %q: %w", ErrTemplate, k, err)
		}
		vars[k] = cv
	}
	messages, err := decodeList("messages", in.Messages)
	if err != nil {
		return nil, nil, err
	}
	vars["messages"] = messages
	tools, err := decodeList("tools", in.Tools)
	if err != nil {
		return nil, nil, err
	}
	vars["tools"] = tools
	if _, ok := vars["documents"]; !ok {
		vars["documents"] = nil
	}
	vars["add_generation_prompt"] = in.AddGenerationPrompt
	raised := &raisedError{}
	vars["raise_exception"] = func(va *exec.VarArgs) (any, error) {
		msg := ""
		if len(va.Args) > 0 {
			msg = va.Args[0].String()
		}
		if raised.msg == nil {
			raised.msg = &msg
		}
		return nil, &TemplateError{Message: msg}
	}
	vars["strftime_now"] = strftimeNow(t.now)
	return exec.NewContext(vars), raised, nil
}

// decodeList decodes a JSON array input; empty or "null" is None.
func decodeList(name string, raw json.RawMessage) (any, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil, nil
	}
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not valid JSON: %w", ErrTemplate, name, err)
	}
	if _, ok := v.([]any); !ok {
		return nil, fmt.Errorf("%w: %s must be a JSON array", ErrTemplate, name)
	}
	return v, nil
}

// newEnvironment builds a private copy of the engine's builtins with our
// filters, tests, methods and control structures (the engine's own sets
// are package globals and are never modified).
func newEnvironment() *exec.Environment {
	fs := exec.NewFilterSet(map[string]exec.FilterFunction{}).Update(builtins.Filters)
	for _, set := range []map[string]exec.FilterFunction{filters(), noneAwareFilters()} {
		for name, f := range set {
			if fs.Exists(name) {
				_ = fs.Replace(name, f)
			} else {
				_ = fs.Register(name, f)
			}
		}
	}
	for _, name := range []string{"join", "format", "pprint"} {
		if f, ok := fs.Get(name); ok {
			_ = fs.Replace(name, sized(f))
		}
	}
	ts := exec.NewTestSet(map[string]exec.TestFunction{}).Update(builtins.Tests)
	for name, f := range tests() {
		_ = ts.Replace(name, f)
	}
	cs := exec.NewControlStructureSet(map[string]parserFunc{}).Update(builtins.ControlStructures)
	_ = cs.Register("generation", generationParser)
	ctx := exec.EmptyContext().Update(builtins.GlobalFunctions)
	return &exec.Environment{
		Filters:           fs,
		Tests:             ts,
		ControlStructures: cs,
		Context:           ctx,
		Methods:           methodSets(),
	}
}

// methodSets copies the engine's methods, replacing the str and dict ones that
// differ from Python.
func methodSets() exec.Methods {
	str := map[string]exec.Method[string]{}
	for _, name := range builtins.Methods.Str.Names() {
		if m, ok := builtins.Methods.Str.Get(name); ok {
			str[name] = m
		}
	}
	for name, m := range pyStrMethods() {
		str[name] = m
	}
	list := pyListMethods()
	if m, ok := builtins.Methods.List.Get("copy"); ok {
		list["copy"] = m
	}
	return exec.Methods{
		Bool:  builtins.Methods.Bool,
		Int:   builtins.Methods.Int,
		Float: builtins.Methods.Float,
		Str:   exec.NewMethodSet(str),
		Dict:  exec.NewMethodSet(pyDictMethods()),
		List:  exec.NewMethodSet(list),
		// pyDictMethods read the ordered dict itself.
		DictSelfOnly: true,
	}
}
