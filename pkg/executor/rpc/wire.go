// Package rpc carries the Executor seam across a process boundary: the
// runner protocol (newline-delimited JSON on a child's stdin/stdout, tagged
// requests, exactly one reply per request, errors as a kind and a message,
// unknown ops rejected), the Serve loop a runner process runs, and Remote,
// the Executor that drives a runner process.
//
// Only token ids, sampled tokens and small per-token records cross the
// pipe; vocabulary-sized logits cross only when a caller explicitly asks
// for them (debug and reference tests), as base64 of little-endian float32.
package rpc

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/sampling"
)

// Ops of the runner protocol.
const (
	OpLoad    = "load"     // params LoadParams → executor.Info
	OpInfo    = "info"     // → executor.Info
	OpNewSeq  = "new_seq"  // params newSeqParams → seqReply
	OpFreeSeq = "free_seq" // params seqReply → {}
	OpStep    = "step"     // params stepParams → stepReply
	OpMemory  = "memory"   // → executor.MemoryInfo
	OpPing    = "ping"     // → {}
	OpClose   = "close"    // → {}; the runner exits after replying
)

// Request is one tagged call.
type Request struct {
	ID     uint64          `json:"id"`
	Op     string          `json:"op"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Reply answers the request with the same ID: Result on success, Error
// otherwise.
type Reply struct {
	ID     uint64          `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *executor.Error `json:"error,omitempty"`
}

// LoadParams ask a runner to load a model: the model's path and the load
// options, whose fields sit beside the path in the request's JSON.
type LoadParams struct {
	// Path is a GGUF file or a Hugging Face safetensors directory.
	Path string `json:"path"`
	// LoadOptions.TP, above 1, has the runner split the model over that
	// many tensor-parallel ranks: it is rank 0 and starts the others
	// (`helexa worker`).
	executor.LoadOptions
}

// Float is a float32 that survives JSON with its infinities and NaN
// (encoded as the strings "inf", "-inf" and "nan").
type Float float32

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"nan"`), nil
	case math.IsInf(v, 1):
		return []byte(`"inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-inf"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 32), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *Float) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"nan"`:
		*f = Float(math.NaN())
	case `"inf"`:
		*f = Float(math.Inf(1))
	case `"-inf"`:
		*f = Float(math.Inf(-1))
	default:
		v, err := strconv.ParseFloat(string(b), 32)
		if err != nil {
			return fmt.Errorf("bad float %s: %w", b, err)
		}
		*f = Float(v)
	}
	return nil
}

// wireParams are sampling.Params with a logit bias that may hold -Inf.
type wireParams struct {
	sampling.Params
	LogitBias map[int32]Float `json:"logit_bias,omitempty"`
}

func toWireParams(p sampling.Params) wireParams {
	w := wireParams{Params: p}
	w.Params.LogitBias = nil
	if len(p.LogitBias) > 0 {
		w.LogitBias = make(map[int32]Float, len(p.LogitBias))
		for id, b := range p.LogitBias {
			w.LogitBias[id] = Float(b)
		}
	}
	return w
}

func (w wireParams) params() sampling.Params {
	p := w.Params
	p.LogitBias = nil
	if len(w.LogitBias) > 0 {
		p.LogitBias = make(map[int32]float32, len(w.LogitBias))
		for id, b := range w.LogitBias {
			p.LogitBias[id] = float32(b)
		}
	}
	return p
}

type newSeqParams struct {
	Params wireParams `json:"params"`
}

type seqReply struct {
	Seq executor.SeqID `json:"seq"`
}

// wireWork is executor.Work on the wire; the JSON-mode mask is base64 of
// little-endian uint64 words.
type wireWork struct {
	Seq         executor.SeqID      `json:"seq"`
	Tokens      []int32             `json:"tokens"`
	Pos         int                 `json:"pos"`
	Blocks      []int32             `json:"blocks"`
	WinBlocks   []int32             `json:"win_blocks,omitempty"`
	LoadState   uint64              `json:"load_state,omitempty"`
	SaveState   uint64              `json:"save_state,omitempty"`
	DropStates  []uint64            `json:"drop_states,omitempty"`
	History     []int32             `json:"history,omitempty"`
	Sample      bool                `json:"sample,omitempty"`
	SkipLogprob bool                `json:"skip_logprob,omitempty"`
	TopLogprobs int                 `json:"top_logprobs,omitempty"`
	Logits      executor.LogitsMode `json:"logits,omitempty"`
	Allowed     string              `json:"allowed,omitempty"`
	HasAllowed  bool                `json:"has_allowed,omitempty"`
	Embed       executor.EmbedMode  `json:"embed,omitempty"`
	EmbedFinal  bool                `json:"embed_final,omitempty"`
}

type stepParams struct {
	Works []wireWork `json:"works"`
}

type wireTop struct {
	Token   int32 `json:"token"`
	Logprob Float `json:"logprob"`
}

// wireResult is executor.Result on the wire; logits (only when asked) are
// base64 of little-endian float32, one string per vector.
type wireResult struct {
	Seq     executor.SeqID `json:"seq"`
	Token   int32          `json:"token"`
	Logprob Float          `json:"logprob"`
	Top     []wireTop      `json:"top,omitempty"`
	Logits  []string       `json:"logits,omitempty"`
	// Embedding is base64 of little-endian float32 (hidden-size, not
	// vocabulary-size).
	Embedding string          `json:"embedding,omitempty"`
	Err       *executor.Error `json:"err,omitempty"`
}

type stepReply struct {
	Results []wireResult `json:"results"`
}

func toWireWork(w executor.Work) wireWork {
	out := wireWork{Seq: w.Seq, Tokens: w.Tokens, Pos: w.Pos, Blocks: w.Blocks, WinBlocks: w.WinBlocks, History: w.History,
		LoadState: w.LoadState, SaveState: w.SaveState, DropStates: w.DropStates,
		Sample: w.Sample, SkipLogprob: w.SkipLogprob, TopLogprobs: w.TopLogprobs, Logits: w.Logits,
		Embed: w.Embed, EmbedFinal: w.EmbedFinal}
	if w.Allowed != nil {
		b := make([]byte, 8*len(w.Allowed))
		for i, x := range w.Allowed {
			binary.LittleEndian.PutUint64(b[8*i:], x)
		}
		out.Allowed, out.HasAllowed = base64.StdEncoding.EncodeToString(b), true
	}
	return out
}

func (w wireWork) work() (executor.Work, error) {
	out := executor.Work{Seq: w.Seq, Tokens: w.Tokens, Pos: w.Pos, Blocks: w.Blocks, WinBlocks: w.WinBlocks, History: w.History,
		LoadState: w.LoadState, SaveState: w.SaveState, DropStates: w.DropStates,
		Sample: w.Sample, SkipLogprob: w.SkipLogprob, TopLogprobs: w.TopLogprobs, Logits: w.Logits,
		Embed: w.Embed, EmbedFinal: w.EmbedFinal}
	if w.HasAllowed {
		b, err := base64.StdEncoding.DecodeString(w.Allowed)
		if err != nil || len(b)%8 != 0 {
			return out, fmt.Errorf("token mask of sequence %d is not base64 of 64-bit words", w.Seq)
		}
		out.Allowed = make([]uint64, len(b)/8)
		for i := range out.Allowed {
			out.Allowed[i] = binary.LittleEndian.Uint64(b[8*i:])
		}
	}
	return out, nil
}

func toWireResult(r executor.Result) wireResult {
	out := wireResult{Seq: r.Seq, Token: r.Token, Logprob: Float(r.Logprob), Err: r.Err}
	for _, t := range r.Top {
		out.Top = append(out.Top, wireTop{Token: t.Token, Logprob: Float(t.Logprob)})
	}
	for _, v := range r.Logits {
		out.Logits = append(out.Logits, encodeFloats(v))
	}
	if r.Embedding != nil {
		out.Embedding = encodeFloats(r.Embedding)
	}
	return out
}

// encodeFloats is base64 of little-endian float32 values.
func encodeFloats(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// decodeFloats reverses encodeFloats.
func decodeFloats(s string) ([]float32, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%4 != 0 {
		return nil, fmt.Errorf("not base64 of float32 values")
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

func (w wireResult) result() (executor.Result, error) {
	out := executor.Result{Seq: w.Seq, Token: w.Token, Logprob: float32(w.Logprob), Err: w.Err}
	for _, t := range w.Top {
		out.Top = append(out.Top, executor.TokenLogprob{Token: t.Token, Logprob: float32(t.Logprob)})
	}
	for _, s := range w.Logits {
		v, err := decodeFloats(s)
		if err != nil {
			return out, fmt.Errorf("logits of sequence %d: %w", w.Seq, err)
		}
		out.Logits = append(out.Logits, v)
	}
	if w.Embedding != "" {
		v, err := decodeFloats(w.Embedding)
		if err != nil {
			return out, fmt.Errorf("embedding of sequence %d: %w", w.Seq, err)
		}
		out.Embedding = v
	}
	return out, nil
}
