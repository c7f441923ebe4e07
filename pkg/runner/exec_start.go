package runner

import (
	"context"

	"github.com/helexa/helexa/pkg/executor"
)

// ExecOptions are what a loader asks of a model's executor.
type ExecOptions struct {
	NumCtx, BlockSize, Threads, ChunkSize, NumParallel int
}

// ExecStarter starts the executor of a model file (a GGUF file or a
// Hugging Face directory) once the loader has read its text side: in
// process (the CPU executor), or in a runner process (rpc.Remote).
type ExecStarter interface {
	StartExecutor(ctx context.Context, name, path string, o ExecOptions) (executor.Executor, error)
}

// ExecStarterFunc adapts a function to ExecStarter.
type ExecStarterFunc func(ctx context.Context, name, path string, o ExecOptions) (executor.Executor, error)

// StartExecutor implements ExecStarter.
func (f ExecStarterFunc) StartExecutor(ctx context.Context, name, path string, o ExecOptions) (executor.Executor, error) {
	return f(ctx, name, path, o)
}

// exitWatcher is implemented by executors whose model lives in another
// process: Exited is closed when that process is gone, ExitErr says why.
type exitWatcher interface {
	Exited() <-chan struct{}
	ExitErr() error
}

// pidExecutor is implemented by executors running in a runner process.
type pidExecutor interface {
	PID() int
}

// runnerPID is the executor's runner process id, 0 when in-process.
func runnerPID(ex executor.Executor) int {
	if p, ok := ex.(pidExecutor); ok {
		return p.PID()
	}
	return 0
}

// exitedChan is the channel closed when an out-of-process executor's
// runner is gone (nil, never ready, for in-process executors).
func exitedChan(ex executor.Executor) <-chan struct{} {
	if w, ok := ex.(exitWatcher); ok {
		return w.Exited()
	}
	return nil
}

// toolDecoderTokenizer is a Tokenizer that can decode with the tool tags a
// tool-call parser needs kept (Llama 3.1's <|python_tag|>). Tokenizers
// without it decode tool requests like any other.
type toolDecoderTokenizer interface {
	NewToolDecoder() Decoder
}
