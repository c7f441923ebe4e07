// Package api owns helexa's HTTP surface: the gin server and one encoder
// per protocol over the same engine path — OpenAI (chat/completions,
// completions, embeddings, models, responses), Anthropic's Messages API,
// ollama's API (/api/chat, /api/generate, /api/tags, /api/show, /api/ps,
// /api/pull, /api/delete, …) and llama-server's utility endpoints — plus
// helexa's own routes (/api/load, /api/unload, /health, /metrics), the
// browser guard, their request and response types, and the Go Client that
// implements engine.Service against a daemon. The endpoints encode what
// the engine emits (reasoning, content and structured tool calls, parsed
// by the engine with the model's output format) in the protocol's shape;
// they parse no model output themselves.
package api

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/helexa/helexa/pkg/engine"
)

// retryAfterSeconds is the Retry-After of a 503 (busy, no memory, a model
// being recovered): a short wait, as the condition is usually brief.
const retryAfterSeconds = "2"

// Defaults for the Config fields left zero.
const (
	DefaultMaxBodyBytes       = 4 << 20
	DefaultStreamWriteTimeout = time.Minute
	DefaultBodyReadTimeout    = 30 * time.Second
)

// PullFunc downloads a model into the local cache, reporting progress.
type PullFunc func(ctx context.Context, model string, progress func(PullProgress)) error

// Puller downloads models for POST /api/pull (pkg/hub, adapted).
type Puller interface {
	Pull(ctx context.Context, model string, progress func(PullProgress)) error
}

// CachedPuller is optionally implemented by a Puller: PullCached answers
// from a complete cached snapshot without asking the Hub.
type CachedPuller interface {
	PullCached(ctx context.Context, model string, progress func(PullProgress)) error
}

// Pull makes a PullFunc a Puller.
func (f PullFunc) Pull(ctx context.Context, model string, progress func(PullProgress)) error {
	return f(ctx, model, progress)
}

// MetricsSource reports the engine's counters and gauges for /metrics
// (engine.Manager implements it).
type MetricsSource interface {
	Metrics() engine.MetricsSnapshot
}

// Config configures a Server.
type Config struct {
	// Service is the engine (required).
	Service engine.Service
	// Puller serves POST /api/pull; nil answers 501.
	Puller Puller
	// Catalog adds the models on disk that are not loaded to /v1/models;
	// nil lists only the loaded models.
	Catalog Catalog
	// Engine adds the scheduler's counters and gauges to /metrics; nil
	// leaves them out (only the server's own counters are shown).
	Engine MetricsSource
	// APIKey, when set, is required as "Authorization: Bearer <key>" (or "x-api-key: <key>") on
	// every endpoint except /health.
	APIKey string
	// MaxBodyBytes limits request bodies (413 beyond); 0 = DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// StreamWriteTimeout is how long one streamed event may take to reach
	// the client; a client that stops reading for longer is dropped and its
	// generation cancelled. 0 = DefaultStreamWriteTimeout; < 0 = no limit.
	StreamWriteTimeout time.Duration
	// BodyReadTimeout is how long a request body may take to arrive once
	// its headers have; a client that stalls longer gets 408 and is
	// dropped. The deadline covers the body only, never the response, so
	// long generations and streams are unaffected. 0 =
	// DefaultBodyReadTimeout; < 0 = no limit.
	BodyReadTimeout time.Duration
	// Logger receives one line per request; nil = slog.Default().
	Logger *slog.Logger
	// Now is the clock (tests); nil = time.Now.
	Now func() time.Time
	// Guard says which Host headers and browser origins are accepted
	// (loopback and localhost only by default).
	Guard Guard
	// Remover serves DELETE /api/delete; nil answers 501.
	Remover Remover
	// Version is helexa's version, for GET /api/version and /props.
	Version string
}

// Server is the HTTP front end over an engine.Service.
type Server struct {
	cfg     Config
	log     *slog.Logger
	metrics *metrics
	engine  *gin.Engine
	// responses keeps Responses API responses for GET and
	// previous_response_id.
	responses *responseStore
}

// NewServer builds a Server.
func NewServer(cfg Config) (*Server, error) {
	if cfg.Service == nil {
		return nil, fmt.Errorf("api: Config.Service is required")
	}
	if cfg.APIKey != "" && strings.TrimSpace(cfg.APIKey) == "" {
		return nil, fmt.Errorf("the API key is blank (only whitespace): set HELEXA_API_KEY to a real token, or unset it")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.StreamWriteTimeout == 0 {
		cfg.StreamWriteTimeout = DefaultStreamWriteTimeout
	}
	if cfg.BodyReadTimeout == 0 {
		cfg.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{cfg: cfg, log: cfg.Logger, metrics: newMetrics(),
		responses: newResponseStore(DefaultResponseStoreCount, DefaultResponseStoreBytes, DefaultResponseStoreTTL, cfg.Now)}
	s.engine = s.routes()
	return s, nil
}

// Handler returns the http.Handler serving every endpoint.
func (s *Server) Handler() http.Handler { return s.engine }

func (s *Server) routes() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.Use(s.recoverer, s.observe, s.guard)
	e.NoRoute(func(c *gin.Context) {
		s.writeError(c, http.StatusNotFound, ErrorBody{
			Message: fmt.Sprintf("no endpoint %s %s", c.Request.Method, c.Request.URL.Path),
			Type:    "not_found_error", Code: codeNoEndpoint,
		})
	})
	e.NoMethod(func(c *gin.Context) {
		s.writeError(c, http.StatusMethodNotAllowed, ErrorBody{
			Message: fmt.Sprintf("method %s not allowed on %s", c.Request.Method, c.Request.URL.Path),
			Type:    "invalid_request_error", Code: string(engine.KindBadRequest),
		})
	})
	e.GET("/health", s.health)
	auth := e.Group("/", s.authenticate, s.limitBody)
	auth.POST("/v1/chat/completions", s.chatCompletions)
	auth.POST("/v1/completions", s.completions)
	auth.POST("/v1/embeddings", s.embeddings)
	auth.POST("/v1/responses", s.createResponse)
	auth.GET("/v1/responses/:id", s.getResponse)
	auth.DELETE("/v1/responses/:id", s.deleteResponse)
	auth.POST("/v1/messages", s.messages)
	auth.POST("/v1/messages/count_tokens", s.countTokens)
	auth.GET("/v1/models", s.listModels)
	auth.GET("/v1/models/*id", s.getModel)
	auth.GET("/api/ps", s.ollamaPS)
	auth.POST("/api/load", s.load)
	auth.POST("/api/unload", s.unload)
	auth.POST("/api/show", s.ollamaShow)
	auth.POST("/api/pull", s.pull)
	s.ollamaRoutes(auth)
	s.utilityRoutes(auth)
	auth.GET("/metrics", s.metricsHandler)
	return e
}

// authenticate enforces the API key when one is configured: a bearer
// token, or the x-api-key header Anthropic's clients send.
func (s *Server) authenticate(c *gin.Context) {
	if s.cfg.APIKey == "" {
		return
	}
	got, ok := strings.CutPrefix(c.GetHeader("Authorization"), "Bearer ")
	if !ok {
		got = c.GetHeader("X-Api-Key")
		ok = got != ""
	}
	if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(s.cfg.APIKey)) != 1 {
		c.Header("WWW-Authenticate", `Bearer realm="helexa"`)
		s.fail(c, engine.Errorf(engine.KindUnauthorized,
			"missing or wrong API key: send \"Authorization: Bearer <key>\" (or \"x-api-key: <key>\") with the daemon's HELEXA_API_KEY"))
		c.Abort()
	}
}

// limitBody caps request bodies; reading past the cap fails with 413.
func (s *Server) limitBody(c *gin.Context) {
	if c.Request.ContentLength > s.cfg.MaxBodyBytes {
		s.writeError(c, http.StatusRequestEntityTooLarge, ErrorBody{
			Message: fmt.Sprintf("request body of %d bytes exceeds the limit of %d bytes", c.Request.ContentLength, s.cfg.MaxBodyBytes),
			Type:    "invalid_request_error", Code: codeBodyTooLarge,
		})
		c.Abort()
		return
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, s.cfg.MaxBodyBytes)
	if c.Request.ContentLength != 0 && c.Request.Body != http.NoBody {
		s.readBody(c)
	}
}

// readBody reads the (size-capped) body before the handler runs, under a
// read deadline of BodyReadTimeout that is lifted once the body is in: a
// client cannot hold a connection and a handler by sending a body slowly,
// and the deadline can never reach into a long generation.
func (s *Server) readBody(c *gin.Context) {
	rc := http.NewResponseController(c.Writer)
	if s.cfg.BodyReadTimeout > 0 {
		_ = rc.SetReadDeadline(time.Now().Add(s.cfg.BodyReadTimeout)) // unsupported (tests' recorders): no deadline
	}
	body, err := io.ReadAll(c.Request.Body)
	_ = rc.SetReadDeadline(time.Time{})
	var ne net.Error
	switch {
	case err == nil:
		c.Request.Body = io.NopCloser(bytes.NewReader(body))
		return
	case errors.As(err, &ne) && ne.Timeout():
		c.Header("Connection", "close")
		s.writeError(c, http.StatusRequestTimeout, ErrorBody{
			Message: fmt.Sprintf("the request body did not arrive within %v", s.cfg.BodyReadTimeout),
			Type:    "invalid_request_error", Code: "request_timeout",
		})
	case errors.As(err, new(*http.MaxBytesError)):
		s.fail(c, err) // 413
	default:
		s.fail(c, badRequest("reading request body: %v", err))
	}
	c.Abort()
}

// recoverer turns a handler panic into a 500 instead of a dropped connection.
func (s *Server) recoverer(c *gin.Context) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("panic in handler", "path", c.Request.URL.Path, "panic", v)
			if !c.Writer.Written() {
				s.fail(c, engine.Errorf(engine.KindInternal, "internal error: %v", v))
			}
			c.Abort()
		}
	}()
	c.Next()
}

// observe counts every request and logs its end.
func (s *Server) observe(c *gin.Context) {
	start := s.cfg.Now()
	c.Next()
	status := c.Writer.Status()
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	s.metrics.request(route, status)
	s.log.Debug("http", "method", c.Request.Method, "path", c.Request.URL.Path, "status", status,
		"duration", s.cfg.Now().Sub(start).Round(time.Microsecond))
}

// fail writes err as an OpenAI-shaped error with the matching status.
func (s *Server) fail(c *gin.Context, err error) {
	status, body := s.clientError(c, err)
	if status >= 500 {
		s.log.Warn("request failed", "path", c.Request.URL.Path, "status", status, "err", err)
	}
	s.writeError(c, status, body.Error)
}

func (s *Server) writeError(c *gin.Context, status int, body ErrorBody) {
	if status == http.StatusServiceUnavailable {
		c.Header("Retry-After", retryAfterSeconds)
	}
	if isAnthropicPath(c.Request.URL.Path) {
		c.JSON(status, anthropicError(status, body))
		return
	}
	if isOllamaRoute(c.Request.URL.Path) {
		c.JSON(status, OllamaError{Error: body.Message, Code: body.Code})
		return
	}
	c.JSON(status, ErrorResponse{Error: body})
}

func (s *Server) health(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}
