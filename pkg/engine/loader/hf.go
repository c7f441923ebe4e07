package loader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/hub"
	"github.com/helexa/helexa/pkg/models/arch"
	"github.com/helexa/helexa/pkg/models/chat"
	"github.com/helexa/helexa/pkg/models/modelfile"
	"github.com/helexa/helexa/pkg/models/safetensors"
	"github.com/helexa/helexa/pkg/models/tokenizer"
)

// loadHF loads a Hugging Face model directory (a local one, or a pulled
// safetensors repository's snapshot): config.json and *.safetensors for
// the weights, tokenizer.json (+ tokenizer_config.json) for the
// tokenizer, the directory's chat template, and the end-of-generation ids
// of generation_config.json and config.json.
func (l *Files) loadHF(ctx context.Context, res *hub.Resolved, opts engine.LoadOptions, log *slog.Logger) (*engine.Model, error) {
	dir := res.ModelPath
	cfgRaw, err := safetensors.ReadSideFile(dir, "config.json")
	if err != nil {
		return nil, &engine.Error{Kind: engine.KindBadRequest, Msg: fmt.Sprintf("model directory %s has no readable config.json", dir), Err: err}
	}
	cfg, err := arch.ParseHFConfig(cfgRaw)
	if err != nil {
		return nil, &engine.Error{Kind: engine.KindBadRequest, Msg: fmt.Sprintf("%s: bad config.json", dir), Err: err}
	}
	tok, err := hfTokenizer(dir)
	if err != nil {
		return nil, err
	}
	numCtx := opts.NumCtx
	if train := cfg.MaxPositionEmbeddings; train > 0 && numCtx > train {
		log.Info("context capped at the model's training context", "asked", numCtx, "train", train)
		numCtx = train
	}
	tpl, tplErr := l.hfTemplate(dir, log)
	if err := templateBudgetError(res.Ref, tplErr); err != nil {
		return nil, err
	}
	mf, err := modelfile.Open(dir)
	if err != nil {
		return nil, &engine.Error{Kind: engine.KindBadRequest, Msg: fmt.Sprintf("loading %s failed", dir), Err: err}
	}
	ex, err := l.startExecutor(ctx, res.Ref, mf, tok, numCtx, opts)
	if err != nil {
		_ = mf.Close()
		return nil, err
	}
	m := &engine.Model{
		Executor:  ex,
		Tokenizer: eogTokenizer{newEngineTokenizer(tok), eosIDs(dir, cfgRaw)},
		Details:   hfDetails(mf, res, ex.Info()),
		Closer:    mf.Close,
	}
	setChat(m, tpl, tplErr, tok, res.Ref, log)
	return m, nil
}

// hfTemplate compiles the chat template of model directory dir (chat.FromDir,
// ChatML when it has none), or HELEXA_CHAT_TEMPLATE when set.
func (l *Files) hfTemplate(dir string, log *slog.Logger) (*chat.Template, error) {
	if l.ChatTemplate != "" {
		tpl, err := chat.Compile(l.ChatTemplate)
		if err != nil {
			return nil, fmt.Errorf("chat template override: %w", err)
		}
		return tpl, nil
	}
	tpl, err := chat.FromDir(dir)
	if errors.Is(err, chat.ErrNoTemplate) {
		log.Info("model has no chat template; using ChatML", "path", dir)
		return chat.Compile(chat.ChatML)
	}
	return tpl, err
}

func hfTokenizer(dir string) (*tokenizer.Tokenizer, error) {
	tj, err := safetensors.ReadSideFile(dir, "tokenizer.json")
	if err != nil {
		return nil, &engine.Error{Kind: engine.KindBadRequest, Msg: fmt.Sprintf("model directory %s has no readable tokenizer.json (helexa reads the Hugging Face tokenizer from it)", dir), Err: err}
	}
	tc, err := safetensors.ReadSideFile(dir, "tokenizer_config.json")
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, &engine.Error{Kind: engine.KindBadRequest, Msg: fmt.Sprintf("%s: reading tokenizer_config.json failed", dir), Err: err}
	}
	tok, err := tokenizer.FromHF(tj, tc)
	if err != nil {
		return nil, &engine.Error{Kind: engine.KindBadRequest, Msg: fmt.Sprintf("%s: reading the tokenizer failed", dir), Err: err}
	}
	return tok, nil
}

// eosIDs collects eos_token_id (a number or a list) from
// generation_config.json and config.json; unreadable files add nothing.
func eosIDs(dir string, cfgRaw []byte) map[int32]bool {
	ids := map[int32]bool{}
	add := func(raw []byte) {
		var doc struct {
			EOS json.RawMessage `json:"eos_token_id"`
		}
		if json.Unmarshal(raw, &doc) != nil || len(doc.EOS) == 0 {
			return
		}
		var one int32
		var many []int32
		if json.Unmarshal(doc.EOS, &one) == nil {
			ids[one] = true
		} else if json.Unmarshal(doc.EOS, &many) == nil {
			for _, id := range many {
				ids[id] = true
			}
		}
	}
	add(cfgRaw)
	if raw, err := safetensors.ReadSideFile(dir, "generation_config.json"); err == nil {
		add(raw)
	}
	return ids
}

// eogTokenizer adds the model's configured end-of-generation ids to the
// tokenizer's own.
type eogTokenizer struct {
	engineTokenizer
	extra map[int32]bool
}

func (e eogTokenizer) IsEOG(id int32) bool { return e.extra[id] || e.engineTokenizer.IsEOG(id) }

// hfDetails describes the model: parameters and the dtype holding most of
// the weights, from the safetensors headers.
func hfDetails(mf *modelfile.Model, res *hub.Resolved, info executor.Info) engine.ModelDetails {
	d := engine.ModelDetails{Name: res.Ref, Path: mf.Path, Arch: info.Arch, ContextTrain: info.NCtxTrain, VocabSize: info.NVocab,
		Context: info.NCtx, FileBytes: info.WeightsBytes}
	f := mf.Safetensors
	bytesByType := map[string]int64{}
	for _, t := range f.Tensors() {
		d.Parameters += t.Elements()
		bytesByType[t.DType] += t.Size()
		if d.Quant == "" || bytesByType[t.DType] > bytesByType[d.Quant] {
			d.Quant = t.DType
		}
	}
	return d
}

// dirWeightsBytes is the size of a model directory's *.safetensors files
// (0 when there are none).
func dirWeightsBytes(dir string) int64 {
	files, _ := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	var n int64
	for _, p := range files {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}
