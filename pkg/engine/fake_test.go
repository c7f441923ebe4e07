package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/sampling"
)

// fakeExec is a deterministic toy model. Its KV "cache" stores the token at
// each position, and the next-token logits are a hash of the prefix read
// back through the block table, so a wrong block table or a wrongly reused
// prefix changes the output.
type fakeExec struct {
	mu     sync.Mutex
	info   executor.Info
	kv     [][]int32
	win    [][]int32  // the sliding-window store (setWindow)
	snaps  *fakeSnaps // recurrent state snapshots (setSnapshots)
	seqs   map[executor.SeqID]*fakeSeq
	nextID executor.SeqID
	// logits overrides the hash model: prefix → logits.
	logits func(prefix []int32) []float32
	// failStep, when it returns an error, fails the whole step.
	failStep func(step int) error
	// seqErr, when it returns an error, fails one sequence's work.
	seqErr func(p sampling.Params) error
	// freePanic, when it returns true, makes FreeSeq panic (a broken
	// executor outside Step).
	freePanic func(p sampling.Params) bool
	// gate, when set, makes every Step wait for a value.
	gate chan struct{}
	mem  executor.MemoryInfo

	steps, fed, maxBatch int
	works                []executor.Work // every work item, copied
	batches              [][]executor.Work
	violations           []string
	closed               bool
}

type fakeSeq struct {
	p   sampling.Params
	rng *rand.Rand
}

func newFakeExec(vocab, nctx, blockSize, numBlocks int) *fakeExec {
	kv := make([][]int32, numBlocks)
	for i := range kv {
		kv[i] = make([]int32, blockSize)
		for j := range kv[i] {
			kv[i][j] = -1
		}
	}
	return &fakeExec{
		info: executor.Info{Arch: "fake", NCtx: nctx, NCtxTrain: nctx, NVocab: vocab, BlockSize: blockSize,
			NumBlocks: numBlocks, BlockBytes: 1024, Processor: "CPU", WeightsBytes: 1 << 20},
		kv:   kv,
		seqs: make(map[executor.SeqID]*fakeSeq),
		mem:  executor.MemoryInfo{WeightsBytes: 1 << 20, KVBytes: int64(numBlocks) * 1024, FreeBytes: 1 << 30},
	}
}

func (f *fakeExec) Info() executor.Info { return f.info }

func (f *fakeExec) NewSeq(p sampling.Params) (executor.SeqID, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p.Temperature < 0 {
		return 0, fmt.Errorf("%w: negative temperature", executor.ErrBadRequest)
	}
	f.nextID++
	f.seqs[f.nextID] = &fakeSeq{p: p, rng: rand.New(rand.NewPCG(p.Seed, 7))}
	return f.nextID, nil
}

func (f *fakeExec) FreeSeq(id executor.SeqID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.seqs[id]; s != nil && f.freePanic != nil && f.freePanic(s.p) {
		panic("double free in the KV allocator")
	}
	delete(f.seqs, id)
}

func (f *fakeExec) Memory() executor.MemoryInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mem
}

func (f *fakeExec) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

func (f *fakeExec) liveSeqs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.seqs)
}

func (f *fakeExec) Step(ctx context.Context, batch []executor.Work) ([]executor.Result, error) {
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.steps++
	f.maxBatch = max(f.maxBatch, len(batch))
	if f.failStep != nil {
		if err := f.failStep(f.steps); err != nil {
			return nil, fmt.Errorf("%w: %w", executor.ErrDevice, err)
		}
	}
	out := make([]executor.Result, len(batch))
	f.dropSnapshots(batch)
	f.batches = append(f.batches, nil)
	for i, w := range batch {
		cp := w
		cp.Tokens = append([]int32(nil), w.Tokens...)
		cp.History = append([]int32(nil), w.History...)
		cp.Blocks = nil
		f.works = append(f.works, cp)
		f.batches[len(f.batches)-1] = append(f.batches[len(f.batches)-1], cp)
		f.fed += len(w.Tokens)
		out[i] = f.run(w)
	}
	return out, nil
}

func (f *fakeExec) run(w executor.Work) executor.Result {
	bs := f.info.BlockSize
	s := f.seqs[w.Seq]
	if s == nil {
		f.violations = append(f.violations, fmt.Sprintf("unknown seq %d", w.Seq))
		return executor.Result{Seq: w.Seq, Err: executor.Errorf(executor.KindInternal, "unknown seq")}
	}
	if f.seqErr != nil {
		if err := f.seqErr(s.p); err != nil {
			return executor.Result{Seq: w.Seq, Err: executor.AsError(err)}
		}
	}
	end := w.Pos + len(w.Tokens)
	if len(w.Blocks)*bs < end {
		f.violations = append(f.violations, fmt.Sprintf("block table of seq %d covers %d < %d", w.Seq, len(w.Blocks)*bs, end))
		return executor.Result{Seq: w.Seq, Err: executor.Errorf(executor.KindInternal, "short block table")}
	}
	f.snapshotStep(w)
	for i, t := range w.Tokens {
		p := w.Pos + i
		f.kv[w.Blocks[p/bs]][p%bs] = t
	}
	f.windowStep(w)
	res := executor.Result{Seq: w.Seq}
	if !w.Sample {
		return res
	}
	prefix := make([]int32, end)
	for p := range end {
		prefix[p] = f.kv[w.Blocks[p/bs]][p%bs]
		if prefix[p] < 0 {
			f.violations = append(f.violations, fmt.Sprintf("seq %d reads empty KV at %d", w.Seq, p))
		}
	}
	raw := f.logitsFor(prefix)
	logits := raw
	if w.Allowed != nil {
		logits = slices.Clone(raw)
		for id := range logits {
			if w.Allowed[id/64]&(1<<(uint(id)%64)) == 0 {
				logits[id] = float32(math.Inf(-1))
			}
		}
	}
	res.Token = sampleFake(logits, s)
	// As executor.Local does: logprobs are the log-softmax of the raw
	// logits at temperature 1, whatever the mask and the temperature.
	res.Logprob, res.Top = rawLogprobs(raw, res.Token, w.TopLogprobs)
	return res
}

func (f *fakeExec) logitsFor(prefix []int32) []float32 {
	if f.logits != nil {
		return f.logits(prefix)
	}
	h := fnv.New64a()
	for _, t := range prefix {
		fmt.Fprintf(h, "%d,", t)
	}
	base := h.Sum64()
	out := make([]float32, f.info.NVocab)
	for i := range out {
		x := (base ^ uint64(i)*0x9E3779B97F4A7C15) * 0xBF58476D1CE4E5B9
		x ^= x >> 31
		out[i] = float32(x%1000) / 150
	}
	out[1] = -5 // <eos> is rare, so streams run long
	return out
}

// sampleFake draws a token from logits (already masked) at the
// sequence's temperature, or takes the argmax when it is greedy.
func sampleFake(logits []float32, s *fakeSeq) int32 {
	temp := float64(s.p.Temperature)
	if temp <= 0 {
		temp = 1
	}
	maxL := math.Inf(-1)
	for _, l := range logits {
		maxL = math.Max(maxL, float64(l))
	}
	probs := make([]float64, len(logits))
	var sum float64
	for i, l := range logits {
		probs[i] = math.Exp((float64(l) - maxL) / temp)
		sum += probs[i]
	}
	pick := 0
	if s.p.Greedy() {
		for i := range logits {
			if logits[i] > logits[pick] {
				pick = i
			}
		}
		return int32(pick)
	}
	r := s.rng.Float64() * sum
	for i, p := range probs {
		r -= p
		if r <= 0 && p > 0 {
			pick = i
			break
		}
	}
	return int32(pick)
}

// rawLogprobs is tok's log-softmax over the raw logits at temperature 1
// and the top most likely tokens with theirs (ties to the lower id).
func rawLogprobs(raw []float32, tok int32, top int) (float32, []executor.TokenLogprob) {
	lp := fakeLogSoftmax(raw)
	var tops []executor.TokenLogprob
	if top > 0 {
		ids := make([]int, len(lp))
		for i := range ids {
			ids[i] = i
		}
		sort.SliceStable(ids, func(a, b int) bool { return lp[ids[a]] > lp[ids[b]] })
		for _, id := range ids[:min(top, len(ids))] {
			tops = append(tops, executor.TokenLogprob{Token: int32(id), Logprob: float32(lp[id])})
		}
	}
	return float32(lp[tok]), tops
}

// fakeLogSoftmax is the log-softmax of logits at temperature 1.
func fakeLogSoftmax(logits []float32) []float64 {
	maxL := math.Inf(-1)
	for _, l := range logits {
		maxL = math.Max(maxL, float64(l))
	}
	var sum float64
	for _, l := range logits {
		sum += math.Exp(float64(l) - maxL)
	}
	out := make([]float64, len(logits))
	for i, l := range logits {
		out[i] = float64(l) - maxL - math.Log(sum)
	}
	return out
}

// fakeTok is a small vocabulary: <bos>, <eos>, printable ASCII, and a few
// multi-character tokens. Encoding is greedy longest match.
type fakeTok struct{ vocab []string }

var fakeWords = []string{"\n", "hello", " world", "ST", "OP", "<think>", "</think>", "{\"", "\":", "true", "null", "abc"}

func newFakeTok() *fakeTok {
	v := []string{"<bos>", "<eos>"}
	for c := byte(32); c < 127; c++ {
		v = append(v, string(c))
	}
	return &fakeTok{vocab: append(v, fakeWords...)}
}

func (t *fakeTok) id(s string) int32 {
	for i, v := range t.vocab {
		if v == s {
			return int32(i)
		}
	}
	panic("no token " + s)
}

func (t *fakeTok) Encode(text string, addSpecial, parseSpecial bool) ([]int32, error) {
	var out []int32
	if addSpecial {
		out = append(out, 0)
	}
	for len(text) > 0 {
		best := -1
		for i, v := range t.vocab {
			if i < 2 && !parseSpecial {
				continue
			}
			if strings.HasPrefix(text, v) && (best < 0 || len(v) > len(t.vocab[best])) {
				best = i
			}
		}
		if best < 0 {
			return nil, fmt.Errorf("cannot encode %q", text[:1])
		}
		out = append(out, int32(best))
		text = text[len(t.vocab[best]):]
	}
	return out, nil
}

func (t *fakeTok) IsEOG(id int32) bool { return id == 1 }
func (t *fakeTok) TokenText(id int32) string {
	if id < 2 || int(id) >= len(t.vocab) {
		return ""
	}
	return t.vocab[id]
}
func (t *fakeTok) VocabSize() int      { return len(t.vocab) }
func (t *fakeTok) NewDecoder() Decoder { return fakeDec{t} }

type fakeDec struct{ t *fakeTok }

func (d fakeDec) Add(id int32) string { return d.t.TokenText(id) }
func (d fakeDec) Flush() string       { return "" }

// fakeTemplate renders "role: content\n" lines.
type fakeTemplate struct{}

func (fakeTemplate) Render(_ context.Context, in ChatInput) (string, error) {
	var msgs []struct{ Role, Content string }
	if err := json.Unmarshal(in.Messages, &msgs); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "%s: %s\n", m.Role, m.Content)
	}
	if in.AddGenerationPrompt {
		b.WriteString("assistant:")
	}
	return b.String(), nil
}

// fakeThink splits on whole <think> / </think> pieces.
type fakeThink struct{ in bool }

func (f *fakeThink) Push(text string) (reasoning, content string) {
	for text != "" {
		tag := "<think>"
		if f.in {
			tag = "</think>"
		}
		i := strings.Index(text, tag)
		if i < 0 {
			break
		}
		if f.in {
			reasoning += text[:i]
		} else {
			content += text[:i]
		}
		f.in = !f.in
		text = text[i+len(tag):]
	}
	if f.in {
		reasoning += text
	} else {
		content += text
	}
	return reasoning, content
}
func (f *fakeThink) Flush() (string, string) { return "", "" }

// fakeOutput is the fake models' output format: <think> pieces as
// fakeThink splits them, and, with tools, "[NAME ARGS]" or "[NAME#ID ARGS]"
// in the content as a call (a required call: the whole content is its
// arguments).
type fakeOutput struct{}

func (fakeOutput) NewParser(o ParseOptions) OutputParser {
	open := strings.LastIndex(o.Prompt, "<think>")
	p := &fakeParser{tools: o.Tools != nil, forced: o.ToolChoice}
	if !o.NoReasoning {
		p.think = &fakeThink{in: open >= 0 && strings.LastIndex(o.Prompt, "</think>") < open}
	}
	return p
}

type fakeParser struct {
	think  *fakeThink // nil: no reasoning
	tools  bool
	forced ToolChoice
	pend   string // content held: inside "[…" or a required call
}

func (p *fakeParser) Push(text string) Delta {
	var d Delta
	if p.think != nil {
		d.Reasoning, text = p.think.Push(text)
	}
	if !p.tools {
		d.Content = text
		return d
	}
	p.pend += text
	if p.forced.Required {
		return d
	}
	for {
		i := strings.IndexByte(p.pend, '[')
		if i < 0 {
			d.Content += p.pend
			p.pend = ""
			return d
		}
		d.Content += p.pend[:i]
		p.pend = p.pend[i:]
		j := strings.IndexByte(p.pend, ']')
		if j < 0 {
			return d
		}
		name, args, _ := strings.Cut(p.pend[1:j], " ")
		name, id, _ := strings.Cut(name, "#")
		d.ToolCalls = append(d.ToolCalls, ToolCall{ID: id, Name: name, Arguments: args})
		p.pend = p.pend[j+1:]
	}
}

func (p *fakeParser) Flush() Delta {
	var d Delta
	switch {
	case p.forced.Required && p.pend != "":
		d.ToolCalls = []ToolCall{{Name: p.forced.Name, Arguments: p.pend}}
	default:
		d.Content = p.pend
	}
	p.pend = ""
	return d
}

// fakeLoader builds a fresh fake model per load.
type fakeLoader struct {
	mu    sync.Mutex
	loads int
	// setup customises each new executor.
	setup    func(*fakeExec)
	nctx     int
	bs, nblk int
	execs    []*fakeExec
	tps      []int // LoadOptions.TP of each load
}

func (l *fakeLoader) Load(ctx context.Context, name string, opts LoadOptions) (*Model, error) {
	if strings.HasPrefix(name, "missing") {
		return nil, Errorf(KindNotFound, "model %q not found", name)
	}
	nctx := l.nctx
	if nctx == 0 {
		nctx = opts.NumCtx
	}
	bs, nblk := l.bs, l.nblk
	if bs == 0 {
		bs = 4
	}
	if nblk == 0 {
		nblk = 4 * nctx / bs
	}
	tok := newFakeTok()
	ex := newFakeExec(tok.VocabSize(), nctx, bs, nblk)
	if l.setup != nil {
		l.setup(ex)
	}
	l.mu.Lock()
	l.loads++
	l.tps = append(l.tps, opts.TP)
	l.execs = append(l.execs, ex)
	l.mu.Unlock()
	return &Model{
		Executor: ex, Tokenizer: tok, Template: fakeTemplate{},
		Output:  fakeOutput{},
		Details: ModelDetails{Name: name, Path: "/fake/" + name, Arch: "fake"},
	}, nil
}

func (l *fakeLoader) last() *fakeExec {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.execs[len(l.execs)-1]
}
