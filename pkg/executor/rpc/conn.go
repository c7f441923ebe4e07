package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/helexa/helexa/pkg/executor"
)

// conn is the calling side of the protocol over one pipe pair: it tags
// requests, and a reader goroutine hands each reply to the call waiting
// for its tag. A reply nobody waits for (its call gave up) is dropped, so
// a late reply can never be taken for another request's.
type conn struct {
	w   io.Writer
	wmu sync.Mutex
	log *slog.Logger

	mu      sync.Mutex
	nextID  uint64
	pending map[uint64]chan Reply
	err     error         // why the conn is dead; set once
	dead    chan struct{} // closed when err is set
	// stall is called (once) when a call passes its deadline: the owner
	// kills the peer, whose exit then ends the conn.
	stall func()
	// ended, when set, says why the peer's pipe ended (how the process
	// exited).
	ended func() string
}

func newConn(r io.Reader, w io.Writer, log *slog.Logger, stall func(), ended func() string) *conn {
	c := &conn{w: w, log: log, pending: map[uint64]chan Reply{}, dead: make(chan struct{}), stall: stall, ended: ended}
	go c.readLoop(r)
	return c
}

// readLoop dispatches replies until the pipe ends.
func (c *conn) readLoop(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<16)
	for {
		line, err := readLine(br)
		if err != nil {
			if errors.Is(err, io.EOF) && c.ended != nil {
				c.fail(errors.New(c.ended()))
				return
			}
			c.fail(fmt.Errorf("runner pipe closed: %w", err))
			return
		}
		var rep Reply
		if err := json.Unmarshal(line, &rep); err != nil {
			c.fail(fmt.Errorf("runner sent a malformed reply: %w", err))
			return
		}
		c.mu.Lock()
		ch := c.pending[rep.ID]
		delete(c.pending, rep.ID)
		c.mu.Unlock()
		if ch == nil {
			c.log.Warn("dropping a runner reply nobody waits for", "id", rep.ID)
			continue
		}
		ch <- rep
	}
}

// fail marks the conn dead (the first cause wins) and wakes every call.
func (c *conn) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	close(c.dead)
}

// deadErr is why the conn died, as a device error.
func (c *conn) deadErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return executor.Errorf(executor.KindDevice, "runner failed: %v", c.err)
}

// call sends op and decodes the reply's result into out (when non-nil).
// When drain is set the call waits for its reply even after ctx ends (a
// step the runner has started must finish before the next one is sent);
// otherwise ctx ends the wait. timeout bounds the wait either way: past
// it the runner is considered hung.
func (c *conn) call(ctx context.Context, op string, params, out any, drain bool, timeout time.Duration) error {
	if err := ctx.Err(); err != nil {
		return executor.Errorf(executor.KindCancelled, "%s: %v", op, err)
	}
	var raw json.RawMessage
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return executor.Errorf(executor.KindBadRequest, "encoding %s params: %v", op, err)
		}
		raw = b
	}
	ch := make(chan Reply, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.deadErr()
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if err := c.send(Request{ID: id, Op: op, Params: raw}); err != nil {
		c.fail(err)
		return c.deadErr()
	}
	rep, err := c.wait(ctx, op, ch, drain, timeout)
	if err != nil {
		return err
	}
	if rep.Error != nil {
		return rep.Error
	}
	if out != nil {
		if err := json.Unmarshal(rep.Result, out); err != nil {
			return executor.Errorf(executor.KindDevice, "runner sent a bad %s reply: %v", op, err)
		}
	}
	return nil
}

func (c *conn) send(req Request) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing to the runner: %w", err)
	}
	return nil
}

func (c *conn) wait(ctx context.Context, op string, ch chan Reply, drain bool, timeout time.Duration) (Reply, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	done := ctx.Done()
	if drain {
		done = nil
	}
	select {
	case rep := <-ch:
		return rep, nil
	case <-c.dead:
		return Reply{}, c.deadErr()
	case <-done:
		return Reply{}, executor.Errorf(executor.KindCancelled, "%s: %v", op, ctx.Err())
	case <-timer.C:
		c.fail(fmt.Errorf("no reply to %s within %s; the runner was killed", op, timeout))
		if c.stall != nil {
			c.stall()
		}
		return Reply{}, c.deadErr()
	}
}
