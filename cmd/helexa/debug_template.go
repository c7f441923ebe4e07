package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/helexa/helexa/pkg/models/chat"
	"github.com/helexa/helexa/pkg/models/gguf"
)

// debugTemplateOptions are the flags of `helexa debug template`.
type debugTemplateOptions struct {
	Model               string // .gguf, tokenizer_config.json, or a directory holding one
	Template            string // a Jinja template file instead of a model
	Messages            string // JSON file ("-": stdin)
	Tools               string // JSON file
	Kwargs              string // JSON object
	AddGenerationPrompt bool
}

func newDebugTemplateCmd(s streams) *cobra.Command {
	opts := &debugTemplateOptions{}
	cmd := &cobra.Command{
		Use:   "template (MODEL | --template FILE) --messages FILE.json [--tools FILE.json] [--kwargs JSON] [--add-generation-prompt]",
		Short: "Render a chat template and print the prompt exactly (no trailing newline added)",
		Long: "Render the chat template of MODEL (a .gguf file, a tokenizer_config.json, or a model directory with\n" +
			"tokenizer_config.json or chat_template.jinja) or of a Jinja file given with --template, for the\n" +
			"OpenAI-style messages in --messages (a JSON array; '-' reads stdin). --kwargs sets extra template\n" +
			`variables, e.g. '{"enable_thinking": false}'. The prompt is printed byte for byte, nothing added.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Model = args[0]
			}
			return runDebugTemplate(cmd.Context(), *opts, s)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Template, "template", "", "Jinja template file to render instead of a model's")
	f.StringVar(&opts.Messages, "messages", "", "JSON file with the messages array ('-' for stdin)")
	f.StringVar(&opts.Tools, "tools", "", "JSON file with the tools array")
	f.StringVar(&opts.Kwargs, "kwargs", "", `extra template variables as a JSON object, e.g. '{"enable_thinking": false}'`)
	f.BoolVar(&opts.AddGenerationPrompt, "add-generation-prompt", false, "append the assistant turn header")
	return cmd
}

func runDebugTemplate(ctx context.Context, opts debugTemplateOptions, s streams) error {
	tpl, err := loadDebugTemplate(opts, s.Err)
	if err != nil {
		return modelError("debug template", cmp.Or(opts.Model, opts.Template), err)
	}
	in, err := debugTemplateInput(opts, s.In)
	if err != nil {
		return fmt.Errorf("debug template: %w", err)
	}
	out, err := tpl.Render(ctx, in)
	if err != nil {
		return fmt.Errorf("debug template: %w", err)
	}
	_, err = io.WriteString(s.Out, out)
	return err
}

// loadDebugTemplate compiles the template named by --template or MODEL.
func loadDebugTemplate(opts debugTemplateOptions, logTo io.Writer) (*chat.Template, error) {
	switch {
	case opts.Model != "" && opts.Template != "":
		return nil, errors.New("give either MODEL or --template FILE, not both")
	case opts.Template != "":
		src, err := os.ReadFile(opts.Template)
		if err != nil {
			return nil, err
		}
		return chat.Compile(string(src))
	case opts.Model == "":
		return nil, errors.New("give a MODEL (.gguf file, tokenizer_config.json or model directory) or --template FILE")
	}
	path := opts.Model
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if st.IsDir() {
		t, err := chat.FromDir(path)
		if errors.Is(err, chat.ErrNoTemplate) {
			return nil, fmt.Errorf("%w (give the template with --template FILE)", err)
		}
		return t, err
	}
	if strings.HasSuffix(strings.ToLower(path), ".json") {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		t, err := chat.FromTokenizerConfig(data)
		if errors.Is(err, chat.ErrNoTemplate) {
			return nil, fmt.Errorf("%s: %w (give the template with --template FILE)", path, err)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return t, nil
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return chat.FromGGUF(f, slog.New(slog.NewTextHandler(logTo, nil)))
}

// debugTemplateInput reads the messages, tools and kwargs.
func debugTemplateInput(opts debugTemplateOptions, stdin io.Reader) (chat.Input, error) {
	in := chat.Input{AddGenerationPrompt: opts.AddGenerationPrompt}
	if opts.Messages == "" {
		return in, errors.New("--messages FILE.json is required (a JSON array of messages; '-' reads stdin)")
	}
	if opts.Messages == "-" && opts.Tools == "-" {
		return in, errors.New("stdin can hold only one of --messages and --tools; give the other as a file")
	}
	msgs, err := readJSONArg(opts.Messages, stdin)
	if err != nil {
		return in, fmt.Errorf("--messages: %w", err)
	}
	in.Messages = msgs
	if opts.Tools != "" {
		if in.Tools, err = readJSONArg(opts.Tools, stdin); err != nil {
			return in, fmt.Errorf("--tools: %w", err)
		}
	}
	if opts.Kwargs != "" {
		var kw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(opts.Kwargs), &kw); err != nil {
			return in, fmt.Errorf("--kwargs must be a JSON object: %w", err)
		}
		in.Kwargs = make(map[string]any, len(kw))
		for k, v := range kw {
			if k == "add_generation_prompt" {
				var b bool
				if err := json.Unmarshal(v, &b); err != nil {
					return in, fmt.Errorf("--kwargs: add_generation_prompt must be true or false")
				}
				in.AddGenerationPrompt = in.AddGenerationPrompt || b
				continue
			}
			in.Kwargs[k] = v
		}
	}
	return in, nil
}

// readJSONArg reads a JSON file ("-": stdin) and checks it is valid JSON.
func readJSONArg(path string, stdin io.Reader) (json.RawMessage, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("%s is not valid JSON", path)
	}
	return data, nil
}
