package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"

	"github.com/helexa/helexa/pkg/executor"
)

// Opener loads the model a runner serves (the CPU executor in `helexa
// runner`; fakes in tests).
type Opener func(ctx context.Context, p LoadParams) (executor.Executor, error)

// server is one runner's state: at most one loaded executor.
type server struct {
	open Opener
	ex   executor.Executor
	log  *slog.Logger
}

// maxLine bounds one request line (a step of a long prompt with its block
// tables and a JSON-mode mask is far below it).
const maxLine = 64 << 20

// Serve answers requests read from in, one reply each on out, until in
// ends, a close request, or ctx ends. Requests are handled one at a time in
// arrival order (the executor is driven by one goroutine). It closes the
// loaded executor before returning.
func Serve(ctx context.Context, in io.Reader, out io.Writer, open Opener, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &server{open: open, log: log}
	defer s.closeExecutor()
	r := bufio.NewReaderSize(in, 1<<16)
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := readLine(r)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading a request: %w", err)
		}
		rep, stop := s.handleLine(ctx, line)
		if err := enc.Encode(rep); err != nil {
			return fmt.Errorf("writing reply %d: %w", rep.ID, err)
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("writing reply %d: %w", rep.ID, err)
		}
		if stop {
			return nil
		}
	}
}

// readLine reads one newline-terminated line (the last line may lack the
// newline), refusing lines over maxLine.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, fmt.Errorf("request line over %d bytes", maxLine)
		}
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}

// handleLine decodes and runs one request; stop reports a close request.
func (s *server) handleLine(ctx context.Context, line []byte) (rep Reply, stop bool) {
	var req Request
	if err := json.Unmarshal(line, &req); err != nil {
		return Reply{Error: executor.Errorf(executor.KindBadRequest, "malformed request: %v", err)}, false
	}
	rep.ID = req.ID
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic in runner op", "op", req.Op, "panic", p, "stack", string(debug.Stack()))
			rep.Result, rep.Error = nil, executor.Errorf(executor.KindDevice, "panic in runner op %s: %v", req.Op, p)
		}
	}()
	result, err := s.dispatch(ctx, req)
	if err != nil {
		rep.Error = executor.AsError(err)
		return rep, false
	}
	raw, err := json.Marshal(result)
	if err != nil {
		rep.Error = executor.Errorf(executor.KindInternal, "encoding the %s reply: %v", req.Op, err)
		return rep, false
	}
	rep.Result = raw
	return rep, req.Op == OpClose
}

func (s *server) dispatch(ctx context.Context, req Request) (any, error) {
	if req.Op != OpLoad && req.Op != OpPing && req.Op != OpClose && s.ex == nil {
		return nil, executor.Errorf(executor.KindBadRequest, "op %q before a model is loaded (send %q first)", req.Op, OpLoad)
	}
	switch req.Op {
	case OpLoad:
		return s.load(ctx, req.Params)
	case OpInfo:
		return s.ex.Info(), nil
	case OpNewSeq:
		var p newSeqParams
		if err := decodeParams(req, &p); err != nil {
			return nil, err
		}
		id, err := s.ex.NewSeq(p.Params.params())
		return seqReply{Seq: id}, err
	case OpFreeSeq:
		var p seqReply
		if err := decodeParams(req, &p); err != nil {
			return nil, err
		}
		s.ex.FreeSeq(p.Seq)
		return struct{}{}, nil
	case OpStep:
		return s.step(ctx, req)
	case OpMemory:
		return s.ex.Memory(), nil
	case OpPing:
		return struct{}{}, nil
	case OpClose:
		return struct{}{}, s.closeExecutor()
	}
	return nil, executor.Errorf(executor.KindUnsupported, "unknown op %q", req.Op)
}

func decodeParams(req Request, v any) error {
	if err := json.Unmarshal(req.Params, v); err != nil {
		return executor.Errorf(executor.KindBadRequest, "bad params for op %s: %v", req.Op, err)
	}
	return nil
}

func (s *server) load(ctx context.Context, raw json.RawMessage) (any, error) {
	if s.ex != nil {
		return nil, executor.Errorf(executor.KindBadRequest, "a model is already loaded; a runner serves one model")
	}
	var p LoadParams
	if err := decodeParams(Request{Op: OpLoad, Params: raw}, &p); err != nil {
		return nil, err
	}
	ex, err := s.open(ctx, p)
	if err != nil {
		return nil, err
	}
	s.ex = ex
	s.log.Info("model loaded", "path", p.Path, "ctx", ex.Info().NCtx)
	return ex.Info(), nil
}

func (s *server) step(ctx context.Context, req Request) (any, error) {
	var p stepParams
	if err := decodeParams(req, &p); err != nil {
		return nil, err
	}
	batch := make([]executor.Work, len(p.Works))
	for i, w := range p.Works {
		var err error
		if batch[i], err = w.work(); err != nil {
			return nil, executor.Errorf(executor.KindBadRequest, "%v", err)
		}
	}
	results, err := s.ex.Step(ctx, batch)
	if err != nil {
		return nil, err
	}
	out := stepReply{Results: make([]wireResult, len(results))}
	for i, r := range results {
		out.Results[i] = toWireResult(r)
	}
	return out, nil
}

func (s *server) closeExecutor() error {
	if s.ex == nil {
		return nil
	}
	err := s.ex.Close()
	s.ex = nil
	return err
}
