package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"sync"
	"time"

	"github.com/helexa/helexa/pkg/executor"
)

// ProcessOptions say how to start a runner process.
type ProcessOptions struct {
	// Path and Args are the runner command (e.g. the helexa binary and
	// "runner").
	Path string
	Args []string
	// Env is the child's environment (nil = the parent's).
	Env []string
	// Name is the model's name, attached to every log line of the runner.
	Name string
	// Log receives the runner's stderr, one record per line.
	Log *slog.Logger
	// Timeout bounds every reply (0 = DefaultTimeout); past it the runner
	// is killed and the executor fails with a device error.
	Timeout time.Duration
}

// process is a started runner child.
type process struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed after Wait returned
	status error         // Wait's result, valid once exited is closed
	once   sync.Once
}

// Start starts a runner process and loads a model in it. If ctx ends or the
// load fails, the process is stopped.
func Start(ctx context.Context, opts ProcessOptions, load LoadParams) (*Remote, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	cmd := exec.Command(opts.Path, opts.Args...)
	cmd.Env = opts.Env
	setProcAttrs(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("runner stdin: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("runner stdout: %w", err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("runner stderr: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the runner %s: %w", opts.Path, err)
	}
	p := &process{cmd: cmd, exited: make(chan struct{})}
	log := opts.Log.With("model", opts.Name, "runner_pid", cmd.Process.Pid)
	var pipes sync.WaitGroup
	pipes.Add(1)
	go func() {
		defer pipes.Done()
		logLines(stderr, log)
	}()
	out := &eofNotifier{r: stdout, eof: make(chan struct{})}
	go func() {
		pipes.Wait()
		<-out.eof
		p.status = cmd.Wait()
		close(p.exited)
	}()
	c := newConn(out, stdin, log, p.kill, p.exitReason)
	r := &Remote{c: c, proc: p, timeout: opts.Timeout}
	if err := r.load(ctx, load); err != nil {
		_ = p.stop()
		return nil, err
	}
	log.Info("runner started", "path", load.Path)
	return r, nil
}

// load sends the load op; ctx ending kills the runner (a load cannot be
// abandoned half-way and the process reused).
func (r *Remote) load(ctx context.Context, p LoadParams) error {
	stop := context.AfterFunc(ctx, func() {
		if r.proc != nil {
			r.proc.kill()
		}
	})
	defer stop()
	err := r.c.call(context.WithoutCancel(ctx), OpLoad, p, &r.info, true, r.timeout)
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("loading %s in the runner: %w", p.Path, ctx.Err())
	}
	if err != nil {
		if r.proc != nil && executor.KindOf(err) == executor.KindDevice {
			return executor.Errorf(executor.KindDevice, "loading %s in the runner: %v%s", p.Path, err, r.proc.exitNote())
		}
		return err
	}
	return nil
}

// exitReason says how the process ended, once its output pipe has.
func (p *process) exitReason() string {
	select {
	case <-p.exited:
		if p.status != nil {
			return fmt.Sprintf("runner process exited (%v)", p.status)
		}
		return "runner process exited"
	case <-time.After(time.Second):
		return "runner process closed its output"
	}
}

// exitNote describes how the process ended, if it has within a moment.
func (p *process) exitNote() string {
	select {
	case <-p.exited:
		if p.status != nil {
			return fmt.Sprintf(" (runner %v)", p.status)
		}
		return " (runner exited)"
	case <-time.After(500 * time.Millisecond):
		return ""
	}
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) kill() {
	p.once.Do(func() { _ = p.cmd.Process.Kill() })
}

// stop waits a moment for the process to exit on its own (after a close
// request), then kills it, and waits for it.
func (p *process) stop() error {
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		p.kill()
		<-p.exited
	}
	var ee *exec.ExitError
	if p.status != nil && !errors.As(p.status, &ee) {
		return p.status
	}
	return nil
}

// logLines copies a runner's stderr to the log, one record per line. A
// runner logs JSON records (slog's JSON handler): their level, message and
// attributes are kept. Anything else (a Go panic's trace) is logged as a
// warning, line by line.
func logLines(r io.Reader, log *slog.Logger) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var rec map[string]any
		if json.Unmarshal(line, &rec) != nil {
			log.Warn("runner: " + string(line))
			continue
		}
		var level slog.Level
		if s, ok := rec[slog.LevelKey].(string); ok {
			_ = level.UnmarshalText([]byte(s))
		}
		msg, _ := rec[slog.MessageKey].(string)
		attrs := make([]any, 0, 2*len(rec))
		for k, v := range rec {
			if k != slog.LevelKey && k != slog.MessageKey && k != slog.TimeKey {
				attrs = append(attrs, k, v)
			}
		}
		log.Log(context.Background(), level, "runner: "+msg, attrs...)
	}
}

// eofNotifier closes eof when its reader reports an error (the pipe's end).
type eofNotifier struct {
	r    io.Reader
	eof  chan struct{}
	once sync.Once
}

func (e *eofNotifier) Read(b []byte) (int, error) {
	n, err := e.r.Read(b)
	if err != nil {
		e.once.Do(func() { close(e.eof) })
	}
	return n, err
}
