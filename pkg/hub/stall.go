package hub

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
)

// ErrStalled marks a download that received nothing for
// Options.ReadTimeout; it is retried from where it stopped, and reported
// once the retries are spent.
var ErrStalled = errors.New("download stalled")

// ErrOversize marks a server that sent more bytes than it declared (the
// LFS size, the Content-Length or the range asked for); nothing past the
// declared size is written.
var ErrOversize = errors.New("the server sent more than the declared size")

// stallReader cancels its request (with cause ErrStalled) when one Read
// waits longer than timeout, so a server that stops sending cannot hold a
// download forever.
type stallReader struct {
	r     io.Reader
	t     *time.Timer
	fired chan struct{} // closed once the timer fired
	once  sync.Once
	d     time.Duration
}

func newStallReader(r io.Reader, d time.Duration, cancel context.CancelCauseFunc) *stallReader {
	s := &stallReader{r: r, d: d, fired: make(chan struct{})}
	s.t = time.AfterFunc(d, func() {
		s.once.Do(func() { close(s.fired) })
		cancel(ErrStalled)
	})
	s.t.Stop()
	return s
}

func (s *stallReader) Read(p []byte) (int, error) {
	select {
	case <-s.fired:
		return 0, ErrStalled
	default:
	}
	s.t.Reset(s.d)
	n, err := s.r.Read(p)
	if !s.t.Stop() && n == 0 && err == nil {
		return 0, ErrStalled
	}
	return n, err
}

// stop disarms the timer.
func (s *stallReader) stop() { s.t.Stop() }
