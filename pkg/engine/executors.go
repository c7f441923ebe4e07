package engine

import "github.com/helexa/helexa/pkg/executor"

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
