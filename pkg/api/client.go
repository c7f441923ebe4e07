package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/pkg/engine"
)

// ErrUnreachable reports that no daemon answered at the client's address;
// callers test it with errors.Is to fall back to an in-process engine.
var ErrUnreachable = errors.New("no helexa daemon answers")

// Client talks to a helexa daemon over HTTP. It implements engine.Service,
// so front ends use a daemon and an in-process engine the same way.
type Client struct {
	base   *url.URL
	apiKey string
	http   *http.Client
}

var _ engine.Service = (*Client)(nil)

// NewClient returns a client for the daemon at host ("127.0.0.1:13131",
// ":13131" or "http://host:port"); apiKey may be empty.
func NewClient(host, apiKey string) (*Client, error) {
	u, err := BaseURL(host)
	if err != nil {
		return nil, err
	}
	return &Client{base: u, apiKey: apiKey, http: &http.Client{}}, nil
}

// NewClientFromEnv returns a client for HELEXA_HOST with HELEXA_API_KEY.
func NewClientFromEnv() (*Client, error) {
	return NewClient(envvars.Host.Get(), envvars.APIKey.Get())
}

// BaseURL turns a listen or dial address into the daemon's base URL; an
// unspecified host (":13131", "0.0.0.0:13131") becomes the loopback address.
func BaseURL(host string) (*url.URL, error) {
	h := strings.TrimSpace(host)
	if h == "" {
		h = envvars.Host.Default
	}
	if !strings.Contains(h, "://") {
		h = "http://" + h
	}
	u, err := url.Parse(h)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("daemon address %q is not host:port or http://host:port", host)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("daemon address %q: scheme must be http or https", host)
	}
	name, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return nil, fmt.Errorf("daemon address %q has no port: %w", host, err)
	}
	if ip := net.ParseIP(name); name == "" || (ip != nil && ip.IsUnspecified()) {
		u.Host = net.JoinHostPort("127.0.0.1", port)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u, nil
}

// Addr returns the daemon's base URL.
func (c *Client) Addr() string { return c.base.String() }

// do sends a request and returns the response when its status is 2xx;
// otherwise it decodes the error body into a *engine.Error.
func (c *Client) do(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encoding request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+path, rd)
	if err != nil {
		return nil, fmt.Errorf("building request: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w at %s (start one with `helexa serve --detach`, or set HELEXA_HOST): %w",
			ErrUnreachable, c.base.Host, err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, readError(resp)
	}
	return resp, nil
}

// readError decodes an error response (OpenAI's shape, or ollama's on
// /api/ routes) into a *engine.Error.
func readError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var oe OllamaError
	if json.Unmarshal(b, &oe) == nil && oe.Error != "" {
		return &engine.Error{Kind: kindOf(resp.StatusCode, oe.Code), Msg: oe.Error}
	}
	var er ErrorResponse
	if err := json.Unmarshal(b, &er); err != nil || er.Error.Message == "" {
		msg := strings.TrimSpace(string(b))
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		return &engine.Error{Kind: kindOf(resp.StatusCode, ""), Msg: fmt.Sprintf("daemon answered %d: %s", resp.StatusCode, msg)}
	}
	return &engine.Error{Kind: kindOf(resp.StatusCode, er.Error.Code), Msg: er.Error.Message}
}

// getJSON / postJSON decode a JSON response into out.
func (c *Client) call(ctx context.Context, method, path string, body, out any) error {
	resp, err := c.do(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decoding %s response: %w", path, err)
	}
	return nil
}

// Health checks that the daemon answers.
func (c *Client) Health(ctx context.Context) error {
	return c.call(ctx, http.MethodGet, "/health", nil, nil)
}

// MetricsText returns the daemon's /metrics page (Prometheus text format).
func (c *Client) MetricsText(ctx context.Context) (string, error) {
	resp, err := c.do(ctx, http.MethodGet, "/metrics", nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("reading /metrics: %w", err)
	}
	return string(b), nil
}

// Models lists the daemon's models as GET /v1/models shows them.
func (c *Client) Models(ctx context.Context) ([]Model, error) {
	var out ModelList
	err := c.call(ctx, http.MethodGet, "/v1/models", nil, &out)
	return out.Data, err
}

// Load loads a model.
func (c *Client) Load(ctx context.Context, req engine.LoadRequest) (engine.ModelStatus, error) {
	var st engine.ModelStatus
	err := c.call(ctx, http.MethodPost, "/api/load",
		LoadRequest{Model: req.Model, NumCtx: req.NumCtx, KeepAlive: wireDuration(req.KeepAlive), TP: req.TP}, &st)
	return st, err
}

// Unload unloads a model.
func (c *Client) Unload(ctx context.Context, model string) error {
	return c.call(ctx, http.MethodPost, "/api/unload", ModelRequest{Model: model}, nil)
}

// PS lists the loaded models.
func (c *Client) PS(ctx context.Context) ([]engine.ModelStatus, error) {
	var out PSResponse
	if err := c.call(ctx, http.MethodGet, "/api/ps", nil, &out); err != nil {
		return nil, err
	}
	sts := make([]engine.ModelStatus, len(out.Models))
	for i, m := range out.Models {
		sts[i] = m.status()
	}
	return sts, nil
}

// Show describes a model.
func (c *Client) Show(ctx context.Context, model string) (engine.ModelDetails, error) {
	var out ShowResponse
	if err := c.call(ctx, http.MethodPost, "/api/show", ShowRequest{Model: model}, &out); err != nil {
		return engine.ModelDetails{}, err
	}
	d := out.ModelDetails
	d.Template = out.Template
	return d, nil
}

// Pull asks the daemon to download a model, passing each progress line to
// progress (which may be nil).
func (c *Client) Pull(ctx context.Context, model string, progress func(PullProgress)) error {
	return c.PullWith(ctx, PullRequest{Model: model}, progress)
}

// PullWith is Pull with the request's options (PreferCache).
func (c *Client) PullWith(ctx context.Context, req PullRequest, progress func(PullProgress)) error {
	model := req.Model
	resp, err := c.do(ctx, http.MethodPost, "/api/pull", req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var r OllamaPullRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return fmt.Errorf("decoding pull progress: %w", err)
		}
		if r.Error != "" {
			return &engine.Error{Kind: kindOf(0, r.Code), Msg: r.Error}
		}
		if r.Event == "" && r.Status != "success" {
			continue // ollama's own records ("pulling manifest")
		}
		p := PullProgress{Status: firstNonEmpty(r.Event, r.Status), File: r.File, Completed: r.Completed, Total: r.Total}
		if r.Event == "notice" {
			p.Message = r.Status
		}
		if progress != nil {
			progress(p)
		}
		if p.Status == "success" {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading pull progress: %w", err)
	}
	return fmt.Errorf("pull of %s: the daemon closed the stream before reporting success", model)
}
