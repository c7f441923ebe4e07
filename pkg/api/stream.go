package api

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/helexa/helexa/pkg/engine"
)

// streamOut is the part every streaming encoder shares: headers committed
// on the first write, so an error before any output still gets a proper
// status code; each write must reach the client within timeout (when > 0):
// a client that stops reading gets a write error, which cancels its
// generation, instead of holding its model busy forever. (net/http clears
// the deadline when the request ends.)
type streamOut struct {
	c       *gin.Context
	started bool
	timeout time.Duration
}

// begin commits the headers on the first write (the content type, no
// caching or proxy buffering) and arms the write deadline.
func (o *streamOut) begin(contentType string) {
	if !o.started {
		h := o.c.Writer.Header()
		h.Set("Content-Type", contentType)
		h.Set("Cache-Control", "no-cache")
		h.Set("Connection", "keep-alive")
		h.Set("X-Accel-Buffering", "no")
		o.c.Status(http.StatusOK)
		o.started = true
	}
	if o.timeout > 0 {
		_ = http.NewResponseController(o.c.Writer).SetWriteDeadline(time.Now().Add(o.timeout))
	}
}

// flush sends what is buffered, reporting a failed write (gin's Flush
// swallows it).
func (o *streamOut) flush() error {
	if u, ok := o.c.Writer.(interface{ Unwrap() http.ResponseWriter }); ok {
		if fe, ok := u.Unwrap().(interface{ FlushError() error }); ok {
			return fe.FlushError()
		}
	}
	o.c.Writer.Flush()
	return nil
}

// sseWriter writes Server-Sent Events.
type sseWriter struct{ streamOut }

func (s *Server) newSSEWriter(c *gin.Context) *sseWriter {
	return &sseWriter{streamOut{c: c, timeout: s.cfg.StreamWriteTimeout}}
}

// send writes one `data:` event holding v as JSON and flushes it.
func (w *sseWriter) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding event: %w", err)
	}
	return w.raw(b)
}

func (w *sseWriter) raw(data []byte) error { return w.frame("", data) }

// sendNamed writes one named SSE event (an `event:` line, then `data:`),
// as the Responses and Messages APIs stream.
func (w *sseWriter) sendNamed(event string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding event %s: %w", event, err)
	}
	return w.frame(event, b)
}

// frame writes one event: an `event:` line when event is set, then the
// `data:` line.
func (w *sseWriter) frame(event string, data []byte) error {
	w.begin("text/event-stream")
	if event != "" {
		if _, err := fmt.Fprintf(w.c.Writer, "event: %s\n", event); err != nil {
			return fmt.Errorf("writing event: %w", err)
		}
	}
	if _, err := fmt.Fprintf(w.c.Writer, "data: %s\n\n", data); err != nil {
		return fmt.Errorf("writing event: %w", err)
	}
	if err := w.flush(); err != nil {
		return fmt.Errorf("writing event: %w", err)
	}
	return nil
}

// done writes the terminating `data: [DONE]` event.
func (w *sseWriter) done() error { return w.raw([]byte("[DONE]")) }

// finishStream ends an OpenAI stream after the generation returned (see
// endFailedStream).
func (s *Server) finishStream(c *gin.Context, w *sseWriter, err error) {
	s.endFailedStream(c, w.started, err, func(_ int, body ErrorResponse) error { return w.send(body) })
}

// endFailedStream ends a stream whose generation failed: an error before
// any output becomes a normal error response; after the first event,
// write sends it in the protocol's own shape (unless the client left).
func (s *Server) endFailedStream(c *gin.Context, started bool, err error, write func(status int, body ErrorResponse) error) {
	if !started {
		s.failOrGone(c, err)
		return
	}
	if c.Request.Context().Err() != nil {
		return
	}
	s.metrics.streamError()
	status, body := s.clientError(c, err)
	s.log.Warn("stream failed", "path", c.Request.URL.Path, "err", err)
	_ = write(status, body)
}

// failOrGone writes an error unless the client has already disconnected.
func (s *Server) failOrGone(c *gin.Context, err error) {
	if c.Request.Context().Err() != nil {
		c.Status(statusClientClosed)
		return
	}
	s.fail(c, err)
}

// statusClientClosed is recorded for requests whose client went away (nginx's 499).
const statusClientClosed = 499

// newID returns an OpenAI-style id with the given prefix.
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// usage converts engine usage to the OpenAI object.
func usage(u engine.Usage) Usage {
	return Usage{
		PromptTokens:        u.PromptTokens,
		CompletionTokens:    u.CompletionTokens,
		TotalTokens:         u.PromptTokens + u.CompletionTokens,
		PromptTokensDetails: &PromptTokensDetails{CachedTokens: u.CachedTokens},
	}
}

// timings converts engine usage to the llama.cpp-style timings object.
func timings(u engine.Usage) *Timings {
	t := &Timings{
		PromptN:     u.PromptTokens - u.CachedTokens,
		CacheN:      u.CachedTokens,
		PromptMS:    float64(u.PrefillDuration.Microseconds()) / 1e3,
		PredictedN:  u.CompletionTokens,
		PredictedMS: float64(u.DecodeDuration.Microseconds()) / 1e3,
		LoadMS:      float64(u.LoadDuration.Microseconds()) / 1e3,
	}
	if t.PromptMS > 0 {
		t.PromptPerSecond = float64(t.PromptN) / t.PromptMS * 1e3
	}
	if t.PredictedMS > 0 {
		t.PredictedPerSecond = float64(t.PredictedN) / t.PredictedMS * 1e3
	}
	return t
}

// chatLogprobs converts a delta's tokens to the chat logprobs object.
func chatLogprobs(toks []engine.TokenInfo) *ChoiceLogprobs {
	out := &ChoiceLogprobs{Content: make([]TokenLogprob, 0, len(toks))}
	for _, t := range toks {
		tl := TokenLogprob{
			TopLogprob:  TopLogprob{Token: t.Text, Logprob: t.Logprob, Bytes: byteInts(t.Text), ID: t.ID},
			TopLogprobs: make([]TopLogprob, 0, len(t.Top)),
		}
		for i, alt := range t.Top {
			text := ""
			if i < len(t.TopText) {
				text = t.TopText[i]
			}
			tl.TopLogprobs = append(tl.TopLogprobs, TopLogprob{Token: text, Logprob: alt.Logprob, Bytes: byteInts(text), ID: alt.Token})
		}
		out.Content = append(out.Content, tl)
	}
	return out
}

func byteInts(s string) []int {
	out := make([]int, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = int(s[i])
	}
	return out
}

func tokenIDs(toks []engine.TokenInfo) []int32 {
	if len(toks) == 0 {
		return nil
	}
	out := make([]int32, len(toks))
	for i, t := range toks {
		out[i] = t.ID
	}
	return out
}

func ptr[T any](v T) *T { return &v }
